#include "studio/idx_file.h"

#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <memory>

namespace studio {
namespace {

using GzFile = std::unique_ptr<gzFile_s, int (*)(gzFile)>;

std::string gzReason(gzFile f) {
  int code = 0;
  const char* text = gzerror(f, &code);
  return text && *text ? text : "unreadable";
}

GzFile open(const std::string& path) {
  GzFile f(gzopen(path.c_str(), "rb"), gzclose);
  if (!f) throw DataError("cannot open data file " + path);
  gzbuffer(f.get(), 1 << 17);
  return f;
}

int64_t readSome(gzFile f, void* dst, unsigned n, const std::string& path) {
  const int got = gzread(f, dst, n);
  if (got < 0)
    throw DataError("data file " + path + " is damaged (" + gzReason(f) +
                    "): its gzip data fails its check; download it again");
  return got;
}

std::vector<int64_t> readHeader(gzFile f, const std::string& path, int expectedRank) {
  unsigned char header[4];
  if (readSome(f, header, 4, path) != 4) throw DataError("data file " + path + " is too short to be an IDX file");
  if (header[0] != 0 || header[1] != 0 || header[2] != 0x08) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "has wrong magic number 0x%02x%02x%02x%02x (expected 0x000008%02x)", header[0],
                  header[1], header[2], header[3], expectedRank);
    throw DataError("data file " + path + " " + buf + ": not an unsigned-byte IDX file");
  }
  if (header[3] != expectedRank)
    throw DataError("data file " + path + " has " + std::to_string(header[3]) + " dimensions (expected " +
                    std::to_string(expectedRank) + ")");
  std::vector<int64_t> dims;
  for (int i = 0; i < expectedRank; ++i) {
    unsigned char d[4];
    if (readSome(f, d, 4, path) != 4) throw DataError("data file " + path + " is truncated inside its header");
    const int64_t dim = (int64_t(d[0]) << 24) | (int64_t(d[1]) << 16) | (int64_t(d[2]) << 8) | d[3];
    if (dim <= 0 || dim > (1 << 28))
      throw DataError("data file " + path + " declares an invalid size " + std::to_string(dim));
    dims.push_back(dim);
  }
  return dims;
}

// Reads the data of out.dims (the header already read) into out.data. Each
// size is below 2^28: the product is checked before it can overflow. A file
// cannot hold more than deflate's best ratio (1032:1) lets it: a header that
// promises far more is refused before anything is allocated. `atLeast`: ""
// when out.dims is the whole file's, "at least " when only its first items.
void readData(gzFile f, const std::string& path, IdxArray& out, const char* atLeast) {
  constexpr int64_t kMost = int64_t(1) << 34;
  int64_t count = 1;
  for (int64_t d : out.dims) {
    if (d > kMost / std::max<int64_t>(count, 1)) throw DataError("data file " + path + " declares too much data");
    count *= d;
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && count > int64_t(1100) * st.st_size + 1024)
    throw DataError("data file " + path + " is truncated: its header promises " + atLeast + std::to_string(count) +
                    " bytes of data, and a file of " + std::to_string(st.st_size) + " bytes cannot hold them");
  out.data.resize(static_cast<size_t>(count));
  int64_t got = 0;
  while (got < count) {
    const unsigned chunk = static_cast<unsigned>(std::min<int64_t>(count - got, 1 << 30));
    const int64_t n = readSome(f, out.data.data() + got, chunk, path);
    if (n == 0) break;
    got += n;
  }
  if (got != count)
    throw DataError("data file " + path + " is truncated: header promises " + atLeast + std::to_string(count) +
                    " bytes of data, the file holds " + std::to_string(got));
}

}  // namespace

std::vector<int64_t> readIdxDims(const std::string& path, int expectedRank) {
  GzFile f = open(path);
  return readHeader(f.get(), path, expectedRank);
}

IdxArray readIdxFirst(const std::string& path, int expectedRank, int64_t items) {
  GzFile f = open(path);
  IdxArray out;
  out.dims = readHeader(f.get(), path, expectedRank);
  out.dims[0] = std::clamp<int64_t>(items, 0, out.dims[0]);
  readData(f.get(), path, out, "at least ");
  return out;
}

IdxArray readIdxFile(const std::string& path, int expectedRank) {
  // gzread reads plain files unchanged, so one path serves .gz and raw files.
  GzFile f = open(path);
  IdxArray out;
  out.dims = readHeader(f.get(), path, expectedRank);
  readData(f.get(), path, out, "");
  // Reading past the data reaches the gzip trailer, where zlib checks the
  // CRC-32 and length of everything read (readSome throws when they fail).
  unsigned char extra;
  if (readSome(f.get(), &extra, 1, path) > 0)
    throw DataError("data file " + path + " holds more data than its header declares");
  return out;
}

}  // namespace studio
