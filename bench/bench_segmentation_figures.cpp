// A semantic segmentation's figures over many masks (studio/segmentation_figures.h),
// timed: the confusion matrix added mask by mask, as an evaluation adds its
// batches, then the figures; the reading apart. bench/segmentation_figures_bench.sh
// times torchvision's references/segmentation ConfusionMatrix on the same masks.
//   bench_segmentation_figures TRUTH PREDICTED CLASSES PIXELS_PER_MASK
// TRUTH and PREDICTED: a byte per pixel, the masks one after another.
// Prints "miou", "pixel_accuracy" and "seconds" lines.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "studio/segmentation_figures.h"

namespace {

std::vector<uint8_t> readAll(const char* path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(std::string("cannot read ") + path);
  return {std::istreambuf_iterator<char>(in), {}};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::cerr << "usage: bench_segmentation_figures TRUTH PREDICTED CLASSES PIXELS_PER_MASK\n";
    return 64;
  }
  try {
    const std::vector<uint8_t> truth = readAll(argv[1]), predicted = readAll(argv[2]);
    const int64_t classes = std::stoll(argv[3]), pixels = std::stoll(argv[4]);
    if (truth.size() != predicted.size() || truth.size() % static_cast<size_t>(pixels) != 0)
      throw std::runtime_error("the two files hold different masks");
    const auto masks = static_cast<int64_t>(truth.size()) / pixels;
    const auto t0 = std::chrono::steady_clock::now();
    studio::ConfusionMatrix m(classes);
    for (int64_t k = 0; k < masks; ++k) m.add(truth.data() + k * pixels, predicted.data() + k * pixels, pixels);
    const studio::SegmentationFigures f = studio::segmentationFigures(m);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("miou %.17g\npixel_accuracy %.17g\nmasks %lld\nseconds %.4f\n", f.meanIou, f.pixelAccuracy,
                static_cast<long long>(masks), s);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
