#include "studio/file_io.h"

#include <fcntl.h>
#include <ftw.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <vector>

namespace studio {
namespace {

std::string reason(int err) { return std::strerror(err); }

// writeFileAtomically's temporary name: "<file>.tmp." and mkstemp's six characters.
constexpr const char* kTemporarySuffix = ".tmp.";

void writeAll(int fd, std::string_view data, const std::string& path) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      const bool full = err == ENOSPC || err == EDQUOT || err == EFBIG;
      throw IoError("cannot write " + path + ": " + reason(err) + (full ? " (disk full or a file-size limit)" : ""));
    }
    done += static_cast<size_t>(n);
  }
}

std::string kindOfFile(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISLNK(mode)) return "a link";
  return "not a file of bytes";
}

// What writeFileAtomically may replace: nothing yet, a regular file, or a
// link (the rename replaces the link itself, never what it points at). A
// device, a FIFO, a socket or a folder is never replaced by a file.
void requireReplaceable(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return;
  if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) return;
  throw InputError(path + " is " + kindOfFile(st.st_mode) + ", not a file; nothing was written there");
}

void syncFolder(const std::string& folder) {
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;  // the rename stands; only its durability is at stake
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

std::string parentFolder(const std::string& path) {
  const std::string p = std::filesystem::path(path).parent_path().string();
  return p.empty() ? "." : p;
}

bool isAtomicWriteTemporary(const std::string& fileName) {
  const size_t at = fileName.rfind(kTemporarySuffix);
  return at != std::string::npos && at > 0 && fileName.size() == at + std::strlen(kTemporarySuffix) + 6;
}

void writeFileAtomically(const std::string& path, std::string_view data,
                         const std::function<void(const char*)>& phase) {
  requireReplaceable(path);
  // A unique name, created exclusively: whatever was planted at "<path>.tmp"
  // (a link to a file elsewhere) is never opened.
  std::string tmpl = path + kTemporarySuffix + "XXXXXX";
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  const int fd = ::mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    throw IoError("cannot create a temporary file beside " + path + ": " + reason(err) +
                  " (is the folder there and writable?)");
  }
  const std::string tmp(name.data());
  try {
    ::fchmod(fd, 0644);
    writeAll(fd, data, path);
    if (::fsync(fd) != 0) {
      const int err = errno;
      throw IoError("cannot write " + path + ": " + reason(err));
    }
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());  // whatever was at path stays as it was
    throw;
  }
  ::close(fd);
  if (phase) phase("temp");
  try {
    requireReplaceable(path);  // again: it may have changed while the file was written
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw IoError("cannot write " + path + ": " + reason(err));
  }
  if (phase) phase("renamed");
  syncFolder(parentFolder(path));
}

bool linkFileAtomically(const std::string& from, const std::string& path,
                        const std::function<void(const char*)>& phase) {
  requireReplaceable(path);
  // A unique temporary name as mkostemp's: link() fails on a name that is
  // taken (never following a link planted there), so another is drawn.
  static constexpr char kLetters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::random_device device;
  std::string tmp;
  for (int attempt = 0;; ++attempt) {
    tmp = path + kTemporarySuffix;
    for (int i = 0; i < 6; ++i) tmp += kLetters[device() % (sizeof kLetters - 1)];
    if (::link(from.c_str(), tmp.c_str()) == 0) break;
    if (errno != EEXIST || attempt >= 100) return false;
  }
  if (phase) phase("temp");
  try {
    requireReplaceable(path);  // again: it may have changed meanwhile
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return false;
  }
  if (phase) phase("renamed");
  syncFolder(parentFolder(path));
  return true;
}

void checkOutputFile(const std::string& path, const std::string& option, bool overwrite,
                     const std::vector<std::string>& inputs) {
  namespace fs = std::filesystem;
  const std::string named = option + " " + path;
  if (path.empty()) throw InputError(option + " names no file (got \"\"); give a file's path");
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (S_ISLNK(st.st_mode))
      throw InputError(named + " is a link" + (fs::exists(path) ? "" : " to nothing") +
                       "; nothing was written: give the path of a file itself");
    if (!S_ISREG(st.st_mode))
      throw InputError(named + " is " + kindOfFile(st.st_mode) +
                       ", not a file; nothing was written: give a file's path");
    for (const auto& input : inputs) {
      std::error_code ec;
      if (!input.empty() && fs::equivalent(path, input, ec))
        throw InputError(named + " is the input " + input + "; nothing was written: give another file");
    }
    if (!overwrite) throw InputError(named + " already exists; nothing was written: give another file, or --overwrite");
    return;
  }
  const std::string folder = parentFolder(path);
  struct stat dir {};
  if (::stat(folder.c_str(), &dir) != 0 || !S_ISDIR(dir.st_mode))
    throw InputError(named + ": its folder " + folder + " is not there; nothing was written: make it first");
}

std::string readFileBytes(const std::string& path, const std::string& what) {
  // O_NONBLOCK: a FIFO opens at once (and is refused below) instead of
  // waiting for a writer; reads of a regular file do not block either way.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    const int err = errno;
    throw InputError("cannot open " + what + " " + path + ": " + reason(err));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw InputError(what + " " + path + " is not a regular file (" + kindOfFile(st.st_mode) + ")");
  }
  std::string out;
  out.resize(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < out.size()) {
    const ssize_t n = ::read(fd, out.data() + done, out.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  out.resize(done);
  return out;
}

int lockFile(const std::string& path, bool wait) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) {
    const int err = errno;
    if (err == ELOOP) throw InputError(path + " is a symbolic link; nothing is written through it (remove the link)");
    throw IoError("cannot create the lock file " + path + ": " + std::strerror(err));
  }
  if (::flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB)) != 0) {
    const int err = errno;
    ::close(fd);
    if (wait) throw IoError("cannot lock " + path + ": " + std::strerror(err));
    return -1;
  }
  return fd;
}

void requireRealDirectory(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    const int err = errno;
    throw InputError("cannot use folder " + path + ": " + reason(err));
  }
  if (S_ISLNK(st.st_mode))
    throw InputError(path +
                     " is a symbolic link; a run folder's sub-folders must be folders, "
                     "so nothing is written through it (remove the link)");
  if (!S_ISDIR(st.st_mode)) throw InputError(path + " is not a folder");
}

AppendFile::AppendFile(const std::string& path) : m_path(path) {
  m_fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (m_fd < 0) {
    const int err = errno;
    if (err == ELOOP) throw InputError(path + " is a symbolic link; nothing is written through it (remove the link)");
    throw IoError("cannot open " + path + " for writing: " + reason(err));
  }
  struct stat st {};
  if (::fstat(m_fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close();
    throw InputError(path + " is not a regular file; nothing is written to it");
  }
}

AppendFile::~AppendFile() { close(); }

AppendFile::AppendFile(AppendFile&& o) noexcept : m_fd(o.m_fd), m_path(std::move(o.m_path)) { o.m_fd = -1; }

AppendFile& AppendFile::operator=(AppendFile&& o) noexcept {
  if (this != &o) {
    close();
    m_fd = o.m_fd;
    m_path = std::move(o.m_path);
    o.m_fd = -1;
  }
  return *this;
}

void AppendFile::append(std::string_view data) {
  if (m_fd < 0) throw IoError("cannot write " + m_path + ": it is not open");
  writeAll(m_fd, data, m_path);
}

void AppendFile::sync() {
  if (m_fd >= 0 && ::fsync(m_fd) != 0) {
    const int err = errno;
    throw IoError("cannot write " + m_path + ": " + reason(err));
  }
}

void AppendFile::close() {
  if (m_fd >= 0) ::close(m_fd);
  m_fd = -1;
}

bool removeTree(const std::string& dir) {
  auto one = [](const char* path, const struct stat*, int, struct FTW*) { return std::remove(path); };
  return ::nftw(dir.c_str(), one, 16, FTW_DEPTH | FTW_PHYS) == 0;
}

long lockHolder(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return -1;
  std::FILE* locks = std::fopen("/proc/locks", "re");
  if (!locks) return -1;
  // "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF": the holder's pid,
  // then the file's device (major:minor, hex) and inode.
  char line[256];
  long holder = -1;
  while (holder < 0 && std::fgets(line, sizeof line, locks)) {
    char kind[16] = "";
    long pid = 0;
    unsigned major = 0, minor = 0;
    unsigned long inode = 0;
    if (std::sscanf(line, "%*[^:]: %15s %*s %*s %ld %x:%x:%lu", kind, &pid, &major, &minor, &inode) != 5) continue;
    if (std::string(kind) != "FLOCK" || inode != st.st_ino || major != ::major(st.st_dev) ||
        minor != ::minor(st.st_dev))
      continue;
    if (pid != static_cast<long>(::getpid())) holder = pid;
  }
  std::fclose(locks);
  return holder;
}

}  // namespace studio
