#include "run/run_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "studio/errors.h"

namespace studio {

RunLock::RunLock(const std::string& runDir) {
  const std::string path = runDir + "/.lock";
  m_fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (m_fd < 0) {
    const int err = errno;
    if (err == ELOOP) throw InputError(path + " is a symbolic link; nothing is written through it (remove the link)");
    throw IoError("cannot create the lock file " + path + ": " + std::strerror(err));
  }
  if (::flock(m_fd, LOCK_EX | LOCK_NB) != 0) {
    char holder[32] = {0};
    const ssize_t n = ::pread(m_fd, holder, sizeof holder - 1, 0);
    ::close(m_fd);
    m_fd = -1;
    throw InputError("run folder " + runDir + " is in use: another Training Studio process" +
                     (n > 0 ? " (pid " + std::string(holder, static_cast<size_t>(n)) + ")" : std::string()) +
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
