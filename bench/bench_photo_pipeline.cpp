// The photo input pipeline at 224 px, on a folder of JPEG photos (written by
// bench/photo_pipeline_bench.sh, which compares the figures with PyTorch's
// DataLoader): the studio's
//   decode  the load: every JPEG decoded (at the DCT scale that keeps 256 px)
//           on all cores, resized to cover 256x256 and centre-cropped, into
//           the memory-mapped cache (data.stored_size 256);
//   epoch   training batches of 64 from the cache through the worker loader
//           (2 workers): RandomResizedCrop to 224, horizontal flip,
//           ColorJitter(0.4, 0.4, 0.4), normalisation, into the batch the
//           model takes on the device (here the CPU).
// Usage: bench_photo_pipeline FOLDER [EPOCHS]
// Prints images/s; the cache lives in a temporary folder.
#include <unistd.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "data/batch_loader.h"
#include "data/data_loading.h"
#include "studio/data_plan.h"

using namespace studio;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

namespace {
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
}  // namespace

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_photo_pipeline FOLDER [EPOCHS]\n");
    return 2;
  }
  const int epochs = argc > 2 ? std::atoi(argv[2]) : 2;
  const fs::path cache = fs::temp_directory_path() / ("studio-bench-photos-" + std::to_string(::getpid()));
  setenv("STUDIO_DATA_CACHE", cache.c_str(), 1);
  TrainConfig c;
  c.data.format = DataFormat::image_folder;
  c.data.root = argv[1];
  c.data.test_fraction = 0.01;
  c.data.image_size = {224, 224};
  c.data.channels = 3;
  c.data.stored_size = 256;
  c.data.augment_flip = true;
  c.data.augment_resized_crop = true;
  c.data.augment_brightness = c.data.augment_contrast = c.data.augment_saturation = 0.4;
  c.data.normalize_stats = NormalizeStats::imagenet;
  c.model.kind = "resnet18";

  auto t = Clock::now();
  const DataSplits d = loadData(c, planData(c), {});
  const double decode = since(t);
  const int64_t n = d.train->size() + d.test->size();
  std::printf("decode: %lld JPEGs to 256x256 (cache build) in %.2f s: %.0f images/s\n", static_cast<long long>(n),
              decode, static_cast<double>(n) / decode);

  LoaderOptions o;
  o.batchSize = 64;
  o.augmentFlip = true;
  o.photo = photoAugment(c.data);
  o.norm = Normalization::make(true, d.mean, d.std, torch::kCPU);
  o.cropHeight = o.cropWidth = 224;
  o.deviceResident = false;
  o.workers = 2;
  o.prefetch = 4;
  BatchLoader loader(d.train, o, torch::kCPU);
  for (int e = 0; e < epochs; ++e) {
    loader.startEpoch(e);
    Batch b;
    int64_t images = 0;
    Clock::time_point first;
    bool started = false;
    while (loader.next(b)) {
      if (!started) {  // from the first batch on: the workers' start is not the pipeline's rate
        first = Clock::now();
        started = true;
        continue;
      }
      images += b.size();
    }
    const double s = since(first);
    std::printf("epoch %d: %lld images after the first batch in %.2f s: %.0f images/s (batch %lld x 3x%lldx%lld)\n",
                e + 1, static_cast<long long>(images), s, static_cast<double>(images) / s,
                static_cast<long long>(b.x.size(0)), static_cast<long long>(b.x.size(2)),
                static_cast<long long>(b.x.size(3)));
  }
  return std::system(("rm -rf '" + cache.string() + "'").c_str()) == 0 ? 0 : 1;
}
