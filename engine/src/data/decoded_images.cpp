#include "data/decoded_images.h"

#include <ATen/ops/_upsample_bilinear2d_aa.h>
#include <c10/core/InferenceMode.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "studio/errors.h"
#include "studio/file_io.h"
#include "studio/image_file.h"
#include "studio/log.h"
#include "studio/machine_memory.h"
#include "studio/sha256.h"

namespace studio {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

// 2: JPEGs decoded at a reduced DCT scale, and the cover fit.
constexpr int kCacheVersion = 2;

// The decoded image at dst (C x H x W): resized when its size differs (to
// cover H x W keeping its aspect, then centre-cropped at torchvision's
// CenterCrop offsets, with `cover`).
void place(const Image& img, const ImageFit& fit, uint8_t* dst) {
  const int64_t h = fit.height, w = fit.width;
  torch::Tensor hwc =
      torch::from_blob(const_cast<uint8_t*>(img.pixels.data()), {img.height, img.width, img.channels}, torch::kUInt8);
  torch::Tensor out = torch::from_blob(dst, {img.channels, h, w}, torch::kUInt8);
  torch::Tensor chw = hwc.permute({2, 0, 1});
  const auto [rh, rw] = resizedSizeFor(img.height, img.width, fit);
  if (img.height != rh || img.width != rw)
    chw = at::_upsample_bilinear2d_aa(chw.unsqueeze(0).to(torch::kFloat32), {rh, rw}, /*align_corners=*/false,
                                      std::nullopt, std::nullopt)
              .squeeze(0)
              .round_()
              .clamp_(0, 255)
              .to(torch::kUInt8);
  out.copy_(centreCrop(chw, h, w));
}

std::string cacheKey(const DecodeRequest& r) {
  Sha256 h;
  h.add("training-studio decoded images v" + std::to_string(kCacheVersion) + "\n");
  h.add(std::to_string(r.channels) + "x" + std::to_string(r.height) + "x" + std::to_string(r.width) +
        (r.cover ? " cover" : "") + "\n");
  for (const auto& f : r.files) {
    struct stat st {};
    // A dangling link is keyed by the link itself (its read fails as a bad file).
    if (::stat(f.c_str(), &st) != 0 && ::lstat(f.c_str(), &st) != 0)
      throw DataError("image file " + f + " disappeared while the data was read");
    const int64_t mtime = int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    h.add(f);
    h.add(std::string(1, '\0') + std::to_string(st.st_size) + " " + std::to_string(mtime) + "\n");
  }
  return h.hex();
}

// A read-only mapping of the cache file as a tensor; the mapping lives as
// long as the tensor.
torch::Tensor mapFile(const std::string& path, const std::vector<int64_t>& shape, int64_t bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  void* p = ::mmap(nullptr, static_cast<size_t>(bytes), PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) return {};
  ::madvise(p, static_cast<size_t>(bytes), MADV_WILLNEED);
  const size_t size = static_cast<size_t>(bytes);
  return torch::from_blob(
      p, shape, [size](void* q) { ::munmap(q, size); }, torch::TensorOptions(torch::kUInt8));
}

struct Decoded {
  std::vector<int64_t> bad;
  std::vector<std::string> reasons;
};

// Decodes every file into base (n rows of C*H*W bytes) on all cores.
Decoded decodeAll(const DecodeRequest& r, uint8_t* base, const LoadProgress& progress) {
  const int64_t n = static_cast<int64_t>(r.files.size());
  const int64_t row = r.channels * r.height * r.width;
  std::atomic<int64_t> next{0}, done{0};
  std::atomic<bool> abort{false};
  std::mutex m;
  std::vector<std::pair<int64_t, std::string>> failures;
  auto work = [&] {
    c10::InferenceMode guard;
    for (int64_t i; !abort && (i = next.fetch_add(1)) < n;) {
      try {
        decodeImageInto(r.files[static_cast<size_t>(i)], r.channels, r.height, r.width, base + i * row, r.cover);
      } catch (const std::exception& e) {
        std::memset(base + i * row, 0, static_cast<size_t>(row));
        std::lock_guard<std::mutex> lock(m);
        failures.emplace_back(i, e.what());
        if (!r.skipBadFiles) abort = true;
      }
      done.fetch_add(1);
    }
  };
  const int threads = static_cast<int>(std::max(1u, std::min<unsigned>(std::thread::hardware_concurrency(), 64)));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(work);
  bool cancelled = false;
  while (done.load() < n && !abort) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (progress.report) progress.report("decoding images", done.load(), n);
    if (progress.cancelled && progress.cancelled()) {
      cancelled = true;
      abort = true;
    }
  }
  for (auto& t : pool) t.join();
  if (cancelled) throw LoadCancelled();
  if (progress.report) progress.report("decoding images", n, n);
  std::sort(failures.begin(), failures.end());
  if (!r.skipBadFiles && !failures.empty())
    throw DataError(failures.front().second +
                    " (set data.on_bad_file to skip to train without the images that cannot be read)");
  Decoded d;
  for (auto& [i, why] : failures) {
    d.bad.push_back(i);
    d.reasons.push_back(std::move(why));
  }
  return d;
}

}  // namespace

torch::Tensor centreCrop(const torch::Tensor& x, int64_t height, int64_t width) {
  auto offset = [](int64_t excess) { return static_cast<int64_t>(std::nearbyint(static_cast<double>(excess) / 2.0)); };
  return x.narrow(-2, offset(x.size(-2) - height), height).narrow(-1, offset(x.size(-1) - width), width);
}

std::string decodedCacheFolder() {
  if (const char* v = std::getenv("STUDIO_DATA_CACHE"); v && *v) return v;
  if (const char* v = std::getenv("STUDIO_CACHE"); v && *v) return std::string(v) + "/decoded";
  if (const char* v = std::getenv("XDG_CACHE_HOME"); v && *v) return std::string(v) + "/training-studio/decoded";
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : "/tmp") + "/.cache/training-studio/decoded";
}

std::pair<int64_t, int64_t> decodeImageInto(const std::string& path, int64_t channels, int64_t height, int64_t width,
                                            uint8_t* dst, bool cover) {
  const ImageFit fit{height, width, cover};
  const Image img = decodeImageFile(path, static_cast<int>(channels), fit);
  place(img, fit, dst);
  return {img.height, img.width};
}

torch::Tensor fitImage(const Image& img, const ImageFit& fit) {
  torch::Tensor out = torch::empty({img.channels, fit.height, fit.width}, torch::kUInt8);
  place(img, fit, out.data_ptr<uint8_t>());
  return out;
}

torch::Tensor decodeImageTensor(const std::string& path, int64_t channels, int64_t height, int64_t width, bool cover) {
  torch::Tensor out = torch::empty({channels, height, width}, torch::kUInt8);
  decodeImageInto(path, channels, height, width, out.data_ptr<uint8_t>(), cover);
  return out;
}

DecodedImages decodeImages(const DecodeRequest& r, const LoadProgress& progress) {
  const auto start = Clock::now();
  DecodedImages out;
  const int64_t n = static_cast<int64_t>(r.files.size());
  const int64_t bytes = n * r.channels * r.height * r.width;
  const std::vector<int64_t> shape{n, r.channels, r.height, r.width};
  if (progress.report) progress.report("checking the decoded-image cache", 0, n);
  const std::string folder = decodedCacheFolder();
  const std::string key = cacheKey(r);
  const std::string dataPath = folder + "/" + key + ".u8", jsonPath = folder + "/" + key + ".json";
  auto seconds = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };

  // A complete entry: the description, and pixels of the right length.
  std::error_code ec;
  if (fs::exists(jsonPath, ec) && fs::file_size(dataPath, ec) == static_cast<uintmax_t>(bytes) && !ec) {
    const auto j = nlohmann::json::parse(readFileBytes(jsonPath, "cache file"), nullptr, false);
    if (j.is_object() && j.value("version", 0) == kCacheVersion && j.value("count", int64_t{-1}) == n) {
      out.images = mapFile(dataPath, shape, bytes);
      if (out.images.defined()) {
        for (const auto& b : j.value("bad", nlohmann::json::array())) {
          out.bad.push_back(b.at("index").get<int64_t>());
          out.badReasons.push_back(b.at("reason").get<std::string>());
        }
        if (!r.skipBadFiles && !out.bad.empty())
          throw DataError(out.badReasons.front() +
                          " (set data.on_bad_file to skip to train without the images that cannot be read)");
        out.fromCache = true;
        out.cacheFile = dataPath;
        out.seconds = seconds();
        return out;
      }
    }
  }

  // Decode into a new file beside the entry, mapped for writing, so a set
  // larger than memory never has to fit in it; fall back to memory when the
  // cache folder cannot be written.
  fs::create_directories(folder, ec);
  std::string tmpl = dataPath + ".tmp.XXXXXX";
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  const int fd = ec ? -1 : ::mkostemp(name.data(), O_CLOEXEC);
  void* map = MAP_FAILED;
  // The file's blocks are taken before any pixel is written: writing a page
  // of a mapping on a full disk would kill the process (SIGBUS).
  const int room = fd >= 0 && bytes > 0 ? ::posix_fallocate(fd, 0, bytes) : EINVAL;
  if (room == 0) map = ::mmap(nullptr, static_cast<size_t>(bytes), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) {
    if (fd >= 0) {
      ::close(fd);
      ::unlink(name.data());
    }
    const std::string why = ec               ? ec.message()
                            : room == ENOSPC ? "the disk has no room for its " + std::to_string(bytes >> 20) + " MiB"
                                             : "not writable";
    // Into memory only what fits: half of it at most, else refused naming the settings.
    const double memory = physicalMemoryBytes();
    if (memory > 0 && static_cast<double>(bytes) > memory / 2)
      throw DataError("the decoded images need " + std::to_string(bytes >> 20) + " MiB (" + std::to_string(n) +
                      " images of " + std::to_string(shape[1]) + "x" + std::to_string(shape[2]) + "x" +
                      std::to_string(shape[3]) + "), which the cache in " + folder + " cannot hold (" + why +
                      ") and more than half of this machine's memory; lower data.stored_size or data.image_size, or "
                      "free the disk");
    log::warn("cannot write the decoded-image cache in " + folder + " (" + why +
              "); decoding into memory, and again next time");
    out.images = torch::empty(shape, torch::kUInt8);
    Decoded d = decodeAll(r, out.images.data_ptr<uint8_t>(), progress);
    out.bad = std::move(d.bad);
    out.badReasons = std::move(d.reasons);
    out.seconds = seconds();
    return out;
  }
  Decoded d;
  try {
    d = decodeAll(r, static_cast<uint8_t*>(map), progress);
  } catch (...) {
    ::munmap(map, static_cast<size_t>(bytes));
    ::close(fd);
    ::unlink(name.data());
    throw;
  }
  ::munmap(map, static_cast<size_t>(bytes));
  const bool synced = ::fsync(fd) == 0;
  ::close(fd);
  nlohmann::json bad = nlohmann::json::array();
  for (size_t k = 0; k < d.bad.size(); ++k) bad.push_back({{"index", d.bad[k]}, {"reason", d.reasons[k]}});
  bool cached = synced && ::rename(name.data(), dataPath.c_str()) == 0;
  if (cached) {
    try {
      writeFileAtomically(
          jsonPath,
          nlohmann::json{
              {"version", kCacheVersion}, {"count", n}, {"shape", shape}, {"first_file", r.files.front()}, {"bad", bad}}
              .dump(1));
    } catch (const std::exception& e) {
      cached = false;
      log::warn(std::string("cannot finish the decoded-image cache entry: ") + e.what());
    }
  } else {
    ::unlink(name.data());
  }
  const std::string from = cached ? dataPath : std::string();
  out.images = cached ? mapFile(dataPath, shape, bytes) : torch::Tensor();
  if (!out.images.defined()) {
    // Nothing to map (the rename or the mapping failed): decode once more into memory.
    out.images = torch::empty(shape, torch::kUInt8);
    d = decodeAll(r, out.images.data_ptr<uint8_t>(), progress);
  }
  out.bad = std::move(d.bad);
  out.badReasons = std::move(d.reasons);
  out.cacheFile = from;
  out.seconds = seconds();
  return out;
}

}  // namespace studio
