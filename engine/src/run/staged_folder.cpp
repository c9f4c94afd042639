#include "run/staged_folder.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "studio/errors.h"
#include "studio/file_io.h"

namespace studio {
namespace fs = std::filesystem;
namespace {

// Moves every entry of `from` into `to`, a folder's entries into a folder of
// the same name there; a file replaces one of its name (rename is atomic).
void moveInto(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(from)) {
    const fs::path there = to / entry.path().filename();
    if (entry.is_directory(ec) && !entry.is_symlink(ec) && fs::is_directory(fs::symlink_status(there, ec))) {
      moveInto(entry.path(), there);
      continue;
    }
    if (::rename(entry.path().c_str(), there.c_str()) != 0)
      throw IoError("cannot move " + entry.path().string() + " to " + there.string() + ": " + std::strerror(errno));
  }
}

// Staging folders of `prefix` in `folder` left by a process that is gone
// (killed before its commit): removed.
void removeLeftovers(const fs::path& folder, const std::string& prefix) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder.empty() ? fs::path(".") : folder, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string rest = name.substr(prefix.size());
    const auto dash = rest.find('-');
    if (dash == std::string::npos || dash == 0 || rest.find_first_not_of("0123456789-") != std::string::npos) continue;
    const long pid = std::strtol(rest.substr(0, dash).c_str(), nullptr, 10);
    if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) removeTree(entry.path().string());
  }
}

}  // namespace

std::string stagedTarget(const std::string& target) {
  fs::path p = fs::path(target).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();
  return p.string();
}

StagedFolder::StagedFolder(const std::string& target) : m_target(stagedTarget(target)) {
  std::error_code ec;
  m_inside = fs::is_directory(m_target, ec);
  const fs::path folder = m_inside ? fs::path(m_target) : fs::path(m_target).parent_path();
  const std::string prefix =
      m_inside ? std::string(".incomplete-") : "." + fs::path(m_target).filename().string() + ".incomplete-";
  removeLeftovers(folder, prefix);
  const fs::path base = folder / prefix;
  static std::atomic<unsigned> counter{0};
  for (int tries = 0; tries < 100; ++tries) {
    const std::string name = base.string() + std::to_string(::getpid()) + "-" + std::to_string(counter++);
    // mkdir applies the umask, so the folder renamed into place has the
    // permissions of one made by hand (mkdtemp's would be 0700).
    if (::mkdir(name.c_str(), 0777) == 0) {
      m_stage = name;
      return;
    }
    if (errno != EEXIST) break;
  }
  throw IoError("cannot write into " + (m_inside ? m_target : fs::path(m_target).parent_path().string()) +
                " (a staging folder for " + m_target + "): " + std::strerror(errno));
}

StagedFolder::~StagedFolder() {
  if (m_stage.empty()) return;
  if (!m_committed || m_inside) removeTree(m_stage);
}

void StagedFolder::commit() {
  if (!m_inside) {
    if (::rename(m_stage.c_str(), m_target.c_str()) == 0) {
      m_committed = true;
      return;
    }
    // The target was made meanwhile and holds files: merge into it.
    if (errno != ENOTEMPTY && errno != EEXIST)
      throw IoError("cannot move " + m_stage + " to " + m_target + ": " + std::strerror(errno));
  }
  moveInto(m_stage, m_target);
  m_committed = true;
  m_inside = true;  // the emptied staging folder is removed
}

std::string StagedFolder::finalPath(const std::string& staged) const {
  if (staged.rfind(m_stage, 0) != 0) return staged;
  return m_target + staged.substr(m_stage.size());
}

}  // namespace studio
