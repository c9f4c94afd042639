#pragma once
// An advisory lock on a run folder while a process trains in it: flock on
// <run>/.lock, which the kernel releases when the process ends, however it
// ends (no stale locks after a crash). A second process that would train in
// the same folder (two resumes at once) gets a clear message instead of
// interleaving its records with the first's. Once held, it removes the
// temporary files that a write cut short by a kill left in the folder
// ("<file>.tmp.XXXXXX"): no other process writes there now.
// Thread: made and dropped on any one thread; it holds for the process.

#include <string>

namespace studio {

class RunLock {
 public:
  // Throws InputError naming the folder (and the process holding it) when
  // another training holds it, IoError when the lock file cannot be made.
  explicit RunLock(const std::string& runDir);
  ~RunLock();
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;
  // Removes runDir's "*.tmp.XXXXXX" files (under the lock only).
  static void removeLeftovers(const std::string& runDir);

 private:
  int m_fd = -1;
};

}  // namespace studio
