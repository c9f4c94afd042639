#include "data/idx_file.h"

#include <zlib.h>

#include <memory>

namespace studio {

IdxArray readIdxFile(const std::string& path, int expectedRank) {
  // gzread reads plain files unchanged, so one path serves .gz and raw files.
  std::unique_ptr<gzFile_s, int (*)(gzFile)> f(gzopen(path.c_str(), "rb"), gzclose);
  if (!f) throw DataError("cannot open data file " + path);
  auto readExact = [&](void* dst, unsigned n) -> int64_t { return gzread(f.get(), dst, n); };

  unsigned char header[4];
  if (readExact(header, 4) != 4)
    throw DataError("data file " + path + " is too short to be an IDX file");
  if (header[0] != 0 || header[1] != 0 || header[2] != 0x08) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "has wrong magic number 0x%02x%02x%02x%02x (expected 0x000008%02x)",
                  header[0], header[1], header[2], header[3], expectedRank);
    throw DataError("data file " + path + " " + buf + ": not an unsigned-byte IDX file");
  }
  if (header[3] != expectedRank)
    throw DataError("data file " + path + " has " + std::to_string(header[3]) +
                    " dimensions (expected " + std::to_string(expectedRank) + ")");
  IdxArray out;
  int64_t count = 1;
  for (int i = 0; i < expectedRank; ++i) {
    unsigned char d[4];
    if (readExact(d, 4) != 4) throw DataError("data file " + path + " is truncated inside its header");
    const int64_t dim = (int64_t(d[0]) << 24) | (int64_t(d[1]) << 16) | (int64_t(d[2]) << 8) | d[3];
    if (dim <= 0 || dim > (1 << 28))
      throw DataError("data file " + path + " declares an invalid size " + std::to_string(dim));
    out.dims.push_back(dim);
    count *= dim;
  }
  if (count > (int64_t(1) << 34)) throw DataError("data file " + path + " declares too much data");
  out.data.resize(static_cast<size_t>(count));
  int64_t got = 0;
  while (got < count) {
    const unsigned chunk = static_cast<unsigned>(std::min<int64_t>(count - got, 1 << 30));
    const int64_t n = readExact(out.data.data() + got, chunk);
    if (n < 0) throw DataError("data file " + path + " is corrupt (gzip error)");
    if (n == 0) break;
    got += n;
  }
  if (got != count)
    throw DataError("data file " + path + " is truncated: header promises " + std::to_string(count) +
                    " bytes of data, the file holds " + std::to_string(got));
  unsigned char extra;
  if (readExact(&extra, 1) > 0)
    throw DataError("data file " + path + " holds more data than its header declares");
  return out;
}

}  // namespace studio
