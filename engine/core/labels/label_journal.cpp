#include "studio/label_journal.h"

#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "studio/errors.h"

namespace studio {
namespace fs = std::filesystem;

namespace {

std::string bytesOrNothing(const std::string& path, const std::string& what) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return {};
  return readFileBytes(path, what);
}

}  // namespace

bool nameInFolder(const std::string& file) {
  const fs::path p(file);
  bool up = false;
  for (const fs::path& part : p) up = up || part == "..";
  return !file.empty() && !p.has_root_path() && !up;
}

void requireKnownMaker(const std::string& madeBy, const std::string& where) {
  if (madeBy != "person" && madeBy != "accepted" && madeBy != "corrected")
    throw InputError((where.empty() ? "" : where + ": ") + "made_by \"" + madeBy +
                     "\" is none of person, accepted, corrected");
}

void requireNameInFolder(const std::string& file, const std::string& where) {
  if (!nameInFolder(file))
    throw InputError(where + ": the image \"" + file +
                     "\" is not a name inside the labelled folder (an absolute path or a \"..\" part); "
                     "name each image by its path under the folder");
}

LabelJournal::LabelJournal(const std::string& labelsFile, const std::string& what) : m_path(labelsFile) {
  m_lock = lockFile(m_path + ".lock", /*wait=*/false);
  if (m_lock < 0) {
    const long holder = lockHolder(m_path + ".lock");
    throw InputError(what + " " + m_path + " is open in another window or program of the studio's" +
                     (holder > 0 ? " (pid " + std::to_string(holder) + ")" : std::string()) +
                     ": close it there first; two editors would undo each other's labels");
  }
  try {
    m_read = bytesOrNothing(m_path, what);
    std::istringstream in(bytesOrNothing(journalPath(), what + " journal"));
    std::string line;
    while (std::getline(in, line)) {
      nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_discarded() || !j.is_object()) continue;  // a line a kill cut short: the change in flight
      m_replayed.push_back(std::move(j));
    }
    m_pending = static_cast<int64_t>(m_replayed.size());
    m_journal = AppendFile(journalPath());
  } catch (...) {
    ::close(m_lock);
    throw;
  }
}

LabelJournal::~LabelJournal() {
  m_journal.close();
  if (m_lock >= 0) ::close(m_lock);
}

void LabelJournal::append(const nlohmann::json& change) {
  m_journal.append(change.dump() + "\n");
  m_journal.sync();
  ++m_pending;
}

std::string LabelJournal::fileBytes() const { return bytesOrNothing(m_path, "labels file"); }

void LabelJournal::writeFile(const std::string& bytes) {
  writeFileAtomically(m_path, bytes);
  m_read = bytes;
  m_journal.close();
  writeFileAtomically(journalPath(), "");
  m_journal = AppendFile(journalPath());
  m_pending = 0;
}

}  // namespace studio
