#include "studio/run_queue.h"
#include "studio/run_layout.h"
#include "studio/run_summary.h"

#include <unistd.h>

#include <filesystem>
#include <set>

#include <nlohmann/json.hpp>

#include "studio/file_io.h"

namespace studio {
namespace {

constexpr const char* kFormat = "training-studio-queue";
constexpr int kVersion = 1;

std::string joinErrors(const std::vector<ConfigError>& errors) {
  std::string s;
  for (const auto& e : errors) s += (s.empty() ? "" : "; ") + e.text();
  return s;
}

// The edit lock: an flock on <queue>.lock, waited for.
struct EditLock {
  int fd;
  explicit EditLock(const std::string& queue) : fd(lockFile(queue + ".lock", true)) {}
  ~EditLock() { ::close(fd); }
};

// "a,b,c" or "[a, b]" -> each value's text, as --set would take it.
std::vector<std::string> gridValues(const std::string& grid, const std::string& list) {
  std::vector<std::string> out;
  if (!list.empty() && list.front() == '[') {
    const auto j = nlohmann::json::parse(list, nullptr, false);
    if (j.is_discarded() || !j.is_array())
      throw ConfigFileError("--grid " + grid + ": " + list + " is not a JSON list of values");
    for (const auto& v : j) out.push_back(v.is_string() ? v.get<std::string>() : v.dump());
  } else {
    size_t start = 0;
    for (;;) {
      const size_t comma = list.find(',', start);
      out.push_back(list.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  for (const auto& v : out)
    if (v.empty()) throw ConfigFileError("--grid " + grid + " has an empty value (values are separated by commas)");
  return out;
}

}  // namespace

std::vector<QueueItem> loadQueue(const std::string& path) {
  namespace fs = std::filesystem;
  if (!fs::exists(fs::symlink_status(path))) return {};
  const std::string where = "queue file " + path;
  const auto doc = nlohmann::json::parse(readFileBytes(path, "queue file"), nullptr, false);
  if (doc.is_discarded()) throw ConfigFileError(where + " is not valid JSON; fix it or remove it");
  if (!doc.is_object() || !doc.contains("format") || doc["format"] != kFormat)
    throw ConfigFileError(where + " is not a Training Studio queue (it lacks \"format\": \"" + kFormat + "\")");
  if (!doc.contains("version") || !doc["version"].is_number_integer() || doc["version"].get<int64_t>() != kVersion)
    throw ConfigFileError(where + " has a version this Training Studio does not read (it reads version " +
                          std::to_string(kVersion) + ")");
  if (!doc.contains("items") || !doc["items"].is_array()) throw ConfigFileError(where + " has no \"items\" list");
  std::vector<QueueItem> items;
  std::set<int64_t> ids;
  size_t index = 0;
  for (const auto& j : doc["items"]) {
    ++index;
    const std::string at = where + ", item " + std::to_string(index);
    if (!j.is_object()) throw ConfigFileError(at + " is not an object");
    QueueItem item;
    try {
      item.id = j.at("id").get<int64_t>();
      item.label = j.value("label", std::string());
      item.status.setName(j.at("status").get<std::string>());
      item.runDir = j.value("run_dir", std::string());
      item.error = j.value("error", std::string());
    } catch (const nlohmann::json::exception&) {
      throw ConfigFileError(at +
                            ": \"id\" must be a whole number and \"status\", \"label\", \"run_dir\" and "
                            "\"error\" texts");
    }
    if (item.id < 1 || !ids.insert(item.id).second)
      throw ConfigFileError(at + ": id " + std::to_string(item.id) + " is not a new number of 1 or more");
    if (!item.status.known())
      throw ConfigFileError(at + ": status \"" + item.status + "\" is not " + namesText(item.status));
    if (!j.contains("settings") || !j["settings"].is_object()) throw ConfigFileError(at + " has no \"settings\"");
    std::vector<ConfigError> errors;
    item.config = configFromJson(j["settings"], errors);
    if (errors.empty()) errors = validate(item.config);
    if (!errors.empty()) throw ConfigFileError(at + " (id " + std::to_string(item.id) + "): " + joinErrors(errors));
    items.push_back(std::move(item));
  }
  return items;
}

void saveQueue(const std::string& path, const std::vector<QueueItem>& items) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& i : items)
    list.push_back({{"id", i.id},
                    {"label", i.label},
                    {"status", i.status},
                    {"run_dir", i.runDir},
                    {"error", i.error},
                    {"settings", toJson(i.config)}});
  const nlohmann::json doc = {{"format", kFormat}, {"version", kVersion}, {"items", list}};
  writeFileAtomically(path, doc.dump(1) + "\n");
}

std::vector<QueueItem> expandGrid(const TrainConfig& base, const std::vector<std::string>& grids) {
  std::vector<QueueItem> out(1);
  out[0].config = base;
  for (const auto& grid : grids) {
    const auto eq = grid.find('=');
    if (eq == std::string::npos || eq == 0)
      throw ConfigFileError("--grid expects key=value1,value2,... (got \"" + grid + "\")");
    const std::string key = grid.substr(0, eq);
    const std::vector<std::string> values = gridValues(grid, grid.substr(eq + 1));
    if (out.size() * values.size() > static_cast<size_t>(kMaxGridRuns))
      throw ConfigFileError("the grid makes " + std::to_string(out.size() * values.size()) +
                            " runs; a queue takes at most " + std::to_string(kMaxGridRuns) + " at once");
    const std::string shortKey = key.substr(key.rfind('.') == std::string::npos ? 0 : key.rfind('.') + 1);
    std::vector<QueueItem> next;
    for (const auto& item : out)
      for (const auto& v : values) {
        QueueItem x = item;
        applyOverride(x.config, key + "=" + v);  // names the setting when it is unknown or mistyped
        x.label += (x.label.empty() ? "" : " ") + key + "=" + v;
        x.config.name += "-" + shortKey + v;
        next.push_back(std::move(x));
      }
    out = std::move(next);
  }
  for (auto& item : out) {
    auto errors = validate(item.config);
    // A value that makes a poor folder name keeps the base name (the label says which it is).
    if (!errors.empty() && errors.front().field == "name") {
      item.config.name = base.name;
      errors = validate(item.config);
    }
    if (!errors.empty())
      throw ConfigFileError("the grid's run " + (item.label.empty() ? std::string("(the settings)") : item.label) +
                            " is not valid: " + joinErrors(errors));
  }
  return out;
}

std::vector<QueueItem> editQueue(const std::string& path, const std::function<void(std::vector<QueueItem>&)>& edit) {
  EditLock lock(path);
  std::vector<QueueItem> items = loadQueue(path);
  edit(items);
  saveQueue(path, items);
  return items;
}

std::vector<QueueItem> addToQueue(const std::string& path, std::vector<QueueItem> add) {
  return editQueue(path, [&](std::vector<QueueItem>& items) {
    int64_t next = 1;
    for (const auto& i : items) next = std::max(next, i.id + 1);
    for (auto& a : add) {
      a.id = next++;
      a.status = QueueStatus::queued;
      a.runDir.clear();
      a.error.clear();
      items.push_back(std::move(a));
    }
  });
}

std::optional<QueueItem> takeNextQueueItem(const std::string& path) {
  std::optional<QueueItem> next;
  editQueue(path, [&](std::vector<QueueItem>& items) {
    QueueItem* pick = nullptr;
    for (auto& i : items)
      if (i.status == QueueStatus::running && !pick) pick = &i;
    for (auto& i : items)
      if (i.status == QueueStatus::queued && !pick) pick = &i;
    if (!pick) return;
    pick->status = QueueStatus::running;
    next = *pick;
  });
  return next;
}

bool queueItemResumes(const QueueItem& item) {
  if (item.runDir.empty() || !std::filesystem::exists(item.runDir + "/checkpoints/last.ckpt")) return false;
  // The folder must hold this item's run: a run_dir edited to name another
  // run would resume (and finish) that one instead. Where it ran and how
  // many threads it used do not make it another run.
  auto trained = [](const TrainConfig& c) {
    nlohmann::json j = toJson(c);
    j.erase("output");
    j.erase("performance");
    return j;
  };
  TrainConfig there;
  try {
    there = loadConfigFile(item.runDir + "/" + run_files::kSettings);
  } catch (const std::exception& e) {
    throw InputError("queue item " + std::to_string(item.id) + ": its run folder " + item.runDir +
                     " has unreadable settings (" + e.what() + ")");
  }
  if (trained(there) != trained(item.config))
    throw InputError("queue item " + std::to_string(item.id) + " names run folder " + item.runDir +
                     ", which holds another run (its settings are not the item's): it is not resumed; set the "
                     "item's run_dir back to its own run, or empty it to start the item afresh");
  return true;
}

void setQueueItemRunDir(const std::string& path, int64_t id, const std::string& runDir) {
  editQueue(path, [&](std::vector<QueueItem>& items) {
    for (auto& i : items)
      if (i.id == id) i.runDir = runDir;
  });
}

void finishQueueItem(const std::string& path, int64_t id, std::optional<RunStatus> runStatus,
                     const std::string& error) {
  editQueue(path, [&](std::vector<QueueItem>& items) {
    for (auto& i : items) {
      if (i.id != id) continue;
      if (finishedStatus(runStatus)) {
        i.status = QueueStatus::done;
      } else if (runStatus == RunStatus::failed) {
        i.status = QueueStatus::failed;
        i.error = error;
      }
    }
  });
}

QueueRunnerLock::QueueRunnerLock(const std::string& path) : m_fd(lockFile(path + ".run.lock", false)) {
  if (m_fd < 0) throw InputError("queue " + path + " is being run by another process; wait for it, or stop it");
}

QueueRunnerLock::~QueueRunnerLock() {
  if (m_fd >= 0) ::close(m_fd);
}

QueuePass::QueuePass(std::string path) : m_path(std::move(path)), m_lock(m_path) {}

std::optional<QueueItem> QueuePass::next() { return takeNextQueueItem(m_path); }

void QueuePass::started(const QueueItem& item, const std::string& runDir) {
  setQueueItemRunDir(m_path, item.id, runDir);
}

void QueuePass::notStarted(const QueueItem& item, const std::string& why) {
  ++m_failed;
  finishQueueItem(m_path, item.id, RunStatus::failed, why);
}

bool QueuePass::ended(const QueueItem& item, std::optional<RunStatus> status, const std::string& error) {
  ++m_ran;
  if (status == RunStatus::failed) ++m_failed;
  finishQueueItem(m_path, item.id, status, error);  // stopped: resumed by the next runner
  return goesOnAfter(status);
}

}  // namespace studio
