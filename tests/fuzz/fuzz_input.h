#pragma once
// The fuzz targets' shared plumbing: the input as a file (readers that take a
// path read it through /proc/self/fd), and the errors a reader may answer
// bad bytes with (its own, never a crash or another exception).
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

namespace studio::fuzz {

// An anonymous in-memory file holding the bytes, closed when it goes.
class InputFile {
 public:
  InputFile(const uint8_t* data, size_t size) : m_fd(::memfd_create("fuzz-input", 0)) {
    if (m_fd < 0) std::abort();
    size_t done = 0;
    while (done < size) {
      const ssize_t n = ::write(m_fd, data + done, size - done);
      if (n <= 0) std::abort();
      done += static_cast<size_t>(n);
    }
    m_path = "/proc/self/fd/" + std::to_string(m_fd);
  }
  ~InputFile() { ::close(m_fd); }
  const std::string& path() const { return m_path; }

 private:
  int m_fd;
  std::string m_path;
};

}  // namespace studio::fuzz
