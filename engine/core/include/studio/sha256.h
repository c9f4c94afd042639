#pragma once
// SHA-256 with OpenSSL's libcrypto: the decoded-image cache's keys and the
// fingerprint of a TorchScript file. Torch-free.
// Thread: any; a Sha256 object belongs to one thread.

#include <memory>
#include <string>
#include <string_view>

namespace studio {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void add(std::string_view bytes);
  // Lower-case hex; the object is spent after it.
  std::string hex();

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

std::string sha256Hex(std::string_view bytes);
// Throws InputError naming the file when it cannot be read.
std::string sha256OfFile(const std::string& path);

}  // namespace studio
