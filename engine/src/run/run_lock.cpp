#include "run/run_lock.h"

#include <filesystem>
#include <system_error>
#include <vector>

#include <unistd.h>

#include "studio/errors.h"
#include "studio/file_io.h"
#include "studio/log.h"

namespace studio {
namespace fs = std::filesystem;

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
  removeLeftovers(runDir);
}

void RunLock::removeLeftovers(const std::string& runDir) {
  std::vector<fs::path> found;
  std::error_code ec;
  // Links are not followed: only the folder's own files go.
  for (fs::recursive_directory_iterator it(runDir, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_regular_file(ec) && !it->is_symlink(ec) && isAtomicWriteTemporary(it->path().filename().string()))
      found.push_back(it->path());
  for (const auto& p : found)
    if (fs::remove(p, ec)) log::info("removed " + p.string() + ", left by a write that a kill cut short");
}

RunLock::~RunLock() {
  if (m_fd >= 0) ::close(m_fd);  // closing releases the lock
}

}  // namespace studio
