#include "studio/sha256.h"

#include <openssl/evp.h>

#include <cstdio>
#include <stdexcept>

#include "studio/file_io.h"

namespace studio {

struct Sha256::Impl {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  ~Impl() { EVP_MD_CTX_free(ctx); }
};

Sha256::Sha256() : m_impl(std::make_unique<Impl>()) {
  if (!m_impl->ctx || EVP_DigestInit_ex(m_impl->ctx, EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("cannot start SHA-256 (OpenSSL)");
}

Sha256::~Sha256() = default;

void Sha256::add(std::string_view bytes) { EVP_DigestUpdate(m_impl->ctx, bytes.data(), bytes.size()); }

std::string Sha256::hex() {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_DigestFinal_ex(m_impl->ctx, md, &n);
  std::string out;
  char buf[3];
  for (unsigned i = 0; i < n; ++i) {
    std::snprintf(buf, sizeof buf, "%02x", md[i]);
    out += buf;
  }
  return out;
}

std::string sha256Hex(std::string_view bytes) {
  Sha256 h;
  h.add(bytes);
  return h.hex();
}

std::string sha256OfFile(const std::string& path) { return sha256Hex(readFileBytes(path, "file")); }

}  // namespace studio
