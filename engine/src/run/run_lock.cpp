#include "run/run_lock.h"

#include <unistd.h>

#include "studio/errors.h"
#include "studio/file_io.h"

namespace studio {

RunLock::RunLock(const std::string& runDir) {
  const std::string path = runDir + "/.lock";
  m_fd = lockFile(path, /*wait=*/false);
  if (m_fd < 0) {
    std::string holder;
    try {
      holder = readFileBytes(path, "lock file").substr(0, 31);
    } catch (const std::exception&) {
      // The pid only makes the message kinder.
    }
    throw InputError("run folder " + runDir + " is in use: another Training Studio process" +
                     (holder.empty() ? std::string() : " (pid " + holder + ")") +
                     " is training in it; wait for it to end, or stop it first");
  }
  const std::string pid = std::to_string(::getpid());
  if (::ftruncate(m_fd, 0) == 0) {
    const ssize_t written = ::pwrite(m_fd, pid.data(), pid.size(), 0);
    (void)written;  // the pid only makes the message of a second process kinder
  }
}

RunLock::~RunLock() {
  if (m_fd >= 0) ::close(m_fd);  // closing releases the lock
}

}  // namespace studio
