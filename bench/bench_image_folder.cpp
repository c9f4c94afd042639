// Image-folder loading at scale: 60,000 PNG files (Fashion-MNIST's training
// images, written here into ten class folders), then
//   cold   the data plan (scanning the folders) and the load: every file
//          decoded on all cores into the memory-mapped cache;
//   cached the same again: the scan, the cache key (a stat of every file) and
//          the cache mapped (the file is in the page cache by then);
//   start  a whole run's start on the cached folder, Session::start to its
//          first metric record (one step of the default cnn).
// Prints the figures; the folder and the cache live in a temporary folder.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "data/data_loading.h"
#include "studio/data_plan.h"
#include "studio/idx_file.h"
#include "studio/image_file.h"
#include "studio/session.h"

using namespace studio;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

namespace {

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

double load(const TrainConfig& c, int n) {
  const auto t = Clock::now();
  const DataPlan plan = planData(c);
  const DataSplits d = loadData(c, plan, {});
  if (d.train->size() + d.test->size() != n) std::fprintf(stderr, "unexpected size\n");
  return since(t);
}

}  // namespace

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  const int n = argc > 1 ? std::atoi(argv[1]) : 60000;
  const fs::path root = fs::temp_directory_path() / ("studio-bench-folder-" + std::to_string(::getpid()));
  const fs::path folder = root / "images", cache = root / "cache";
  setenv("STUDIO_DATA_CACHE", cache.c_str(), 1);
  const IdxArray images = readIdxFile("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz", 3);
  const IdxArray labels = readIdxFile("/usr/share/datasets/fashion-mnist/train-labels-idx1-ubyte.gz", 1);
  auto t = Clock::now();
  for (int k = 0; k < 10; ++k) fs::create_directories(folder / std::to_string(k));
  for (int i = 0; i < n; ++i) {
    Image img;
    img.height = img.width = 28;
    img.channels = 1;
    img.pixels.assign(images.data.begin() + i * 784, images.data.begin() + (i + 1) * 784);
    char name[32];
    std::snprintf(name, sizeof name, "%05d.png", i);
    writePngFile((folder / std::to_string(labels.data[static_cast<size_t>(i)]) / name).string(), img);
  }
  std::printf("wrote %d PNG files in %.1f s (%.0f KiB on disk)\n", n, since(t),
              static_cast<double>(fs::file_size(folder / "0" / "00001.png")) / 1024.0 * n);

  TrainConfig c;
  c.data.format = DataFormat::image_folder;
  c.data.root = folder.string();
  c.data.test_fraction = 1.0 / 6.0;
  c.performance.device = "cpu";
  const unsigned cores = std::thread::hardware_concurrency();
  const double cold = load(c, n);
  std::printf("cold:   scan + decode %d images on %u cores + cache build: %.2f s (%.0f images/s)\n", n, cores, cold,
              n / cold);
  double best = 1e9;
  for (int r = 0; r < 3; ++r) best = std::min(best, load(c, n));
  std::printf("cached: scan + cache key + mapping: %.3f s (best of 3)\n", best);

  c.train.max_steps = 1;
  c.train.log_every_steps = 1;
  c.output.dir = (root / "runs").string();
  t = Clock::now();
  Session s;
  s.start(c);
  MetricRecord r;
  while (!s.pollMetric(r)) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::printf("start:  Session::start to the first step's record on the cached folder: %.2f s\n", since(t));
  s.wait(std::chrono::minutes(5));
  // Not std::filesystem::remove_all: in a program linked with LibTorch it
  // resolves to libtorch.so's own copy, which crashes.
  return std::system(("rm -rf '" + root.string() + "'").c_str()) == 0 ? 0 : 1;
}
