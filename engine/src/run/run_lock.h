#pragma once
// An advisory lock on a run folder while a process trains in it: flock on
// <run>/.lock, which the kernel releases when the process ends, however it
// ends (no stale locks after a crash). A second process that would train in
// the same folder (two resumes at once) gets a clear message instead of
// interleaving its records with the first's.
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

 private:
  int m_fd = -1;
};

}  // namespace studio
