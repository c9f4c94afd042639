#pragma once
// A queue of runs in one JSON file (by default <output.dir>/queue.json), run
// one after another by `training-studio-cli queue run`; it survives closing
// the window and restarting the machine. Each item is a whole, validated
// TrainConfig with its status:
//   queued    not started yet
//   running   started (runDir set); a runner that finds one after a crash or
//             Ctrl-C resumes its run folder from its last checkpoint
//   done      ended completed or early-stopped
//   failed    ended failed (error says why); not retried
// Edits take an flock on <file>.lock for the read-modify-write only, so
// `queue add` works while a runner runs; a runner holds <file>.run.lock
// throughout, so two runners never share a queue. Torch-free.
// Thread: free functions, any thread.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "studio/run_summary.h"
#include "studio/train_config.h"

namespace studio {

// Where an item is: waiting, training (or stopped while training: the next
// runner resumes it), or ended.
STUDIO_CHOICE(QueueStatus, queued, running, done, failed)

struct QueueItem {
  int64_t id = 0;
  std::string label;  // "optimizer.lr=0.1 train.batch_size=64", or "" for plain settings
  TrainConfig config;
  Choice<QueueStatus> status = QueueStatus::queued;
  std::string runDir;  // once started
  std::string error;   // failed
};

inline constexpr int kMaxGridRuns = 64;

// The queue file; a missing file is an empty queue. Throws ConfigFileError
// naming the file (and the item and field) when it is not a queue, or an
// item's settings are unknown or invalid.
std::vector<QueueItem> loadQueue(const std::string& path);
void saveQueue(const std::string& path, const std::vector<QueueItem>& items);

// base with each combination of the grids' values ("key=v1,v2,v3" or
// "key=[v1, v2]"), every one validated before any is returned: a bad value
// throws ConfigFileError naming the setting and the value. No grids: base
// alone. Each item's name gets the values it was given.
std::vector<QueueItem> expandGrid(const TrainConfig& base, const std::vector<std::string>& grids);

// Appends under the edit lock, numbering the items after the last; returns
// the queue as it now stands.
std::vector<QueueItem> addToQueue(const std::string& path, std::vector<QueueItem> items);
// Reads, lets `edit` change the items, writes back, under the edit lock.
std::vector<QueueItem> editQueue(const std::string& path, const std::function<void(std::vector<QueueItem>&)>& edit);

// For a runner: the next item to run, marked running: first one a crash or
// a stop left running (to resume from its run folder), then the first queued.
// nullopt when nothing is left.
std::optional<QueueItem> takeNextQueueItem(const std::string& path);
// Records an item's run folder, and how it ended: the summary's status
// (completed and early-stopped: done; failed: failed, with the error;
// stopped: it stays running, for the next runner to resume).
// An item a runner left running whose run folder has a checkpoint: it is
// resumed, not started again. Throws InputError when that folder holds
// another run (settings that are not the item's).
bool queueItemResumes(const QueueItem& item);
void setQueueItemRunDir(const std::string& path, int64_t id, const std::string& runDir);
void finishQueueItem(const std::string& path, int64_t id, std::optional<RunStatus> runStatus, const std::string& error);

// Held by the process that runs the queue; throws InputError when another
// process runs it.
class QueueRunnerLock {
 public:
  explicit QueueRunnerLock(const std::string& path);
  ~QueueRunnerLock();
  QueueRunnerLock(const QueueRunnerLock&) = delete;
  QueueRunnerLock& operator=(const QueueRunnerLock&) = delete;

 private:
  int m_fd = -1;
};

// One runner's pass over a queue file: the protocol that the CLI's `queue
// run` and the window share. It holds the runner lock, takes the next item
// (one a crash or a stop left running first), records the item's run folder
// once it started or why it could not start, and records how its run ended.
// A stopped run ends the pass: its item stays running, so the next runner
// resumes it.
class QueuePass {
 public:
  // Throws InputError when another process runs the queue.
  explicit QueuePass(std::string path);
  const std::string& path() const { return m_path; }
  // The next item, marked running; nullopt when nothing is left.
  std::optional<QueueItem> next();
  void started(const QueueItem& item, const std::string& runDir);
  void notStarted(const QueueItem& item, const std::string& why);
  // Records how the item's run ended (the summary's status and error);
  // false when the pass ends there (a stopped run).
  bool ended(const QueueItem& item, std::optional<RunStatus> status, const std::string& error);
  static bool goesOnAfter(std::optional<RunStatus> status) { return status != RunStatus::stopped; }
  int ran() const { return m_ran; }
  int failed() const { return m_failed; }

 private:
  std::string m_path;
  QueueRunnerLock m_lock;
  int m_ran = 0, m_failed = 0;
};

}  // namespace studio
