#include "data/box_data.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <mutex>
#include <string>

#include <ATen/Parallel.h>

#include "data/decoded_images.h"
#include "detection/detector_net.h"
#include "studio/box_checks.h"
#include "studio/box_counts.h"
#include "studio/errors.h"
#include "studio/log.h"
#include "studio/machine_memory.h"

namespace studio::detection {
namespace {

// The boxes of each image that training uses (crowds left out).
std::vector<std::vector<const AnnotatedBox*>> trainingBoxes(const BoxAnnotations& a) {
  std::vector<std::vector<const AnnotatedBox*>> of(a.images.size());
  for (const auto& b : a.boxes)
    if (!b.crowd) of[static_cast<size_t>(b.image)].push_back(&b);
  return of;
}

}  // namespace

Placement placeImage(int64_t height, int64_t width, int64_t maxSize, int64_t minShorter) {
  Placement p{height, width, 1.0};
  const int64_t longer = std::max(height, width), shorter = std::min(height, width);
  if (maxSize > 0 && longer > maxSize) {
    p.scale = static_cast<double>(maxSize) / static_cast<double>(longer);
    if (minShorter > 0)
      p.scale = std::min(1.0, std::max(p.scale, static_cast<double>(minShorter) / static_cast<double>(shorter)));
    p.height = std::max<int64_t>(1, std::llround(static_cast<double>(height) * p.scale));
    p.width = std::max<int64_t>(1, std::llround(static_cast<double>(width) * p.scale));
  }
  return p;
}

Placement poolPlacement(int64_t height, int64_t width, const RcnnTransformOptions& t) {
  if (t.fixedSize)
    return placeImage(height, width, std::max(t.fixedSize->height, t.fixedSize->width),
                      std::min(t.fixedSize->height, t.fixedSize->width));
  return placeImage(height, width, t.maxSize);
}

DataSplits loadDetectionData(const TrainConfig& cfg, const DataPlan& p, const LoadProgress& progress) {
  const RcnnTransformOptions transform = detectorOptions(cfg.model, p.classes()).transform;
  DataSplits d;
  d.kind = DataKind::Image;
  d.task = p.task;
  d.classNames = p.classNames;
  const auto boxesOf = trainingBoxes(p.boxes);

  // The images the splits use, in one sorted list: a pool row each.
  std::vector<int64_t> items;
  for (const auto* s : {&p.train, &p.val, &p.test}) items.insert(items.end(), s->items.begin(), s->items.end());
  std::sort(items.begin(), items.end());
  items.erase(std::unique(items.begin(), items.end()), items.end());
  std::vector<Placement> placed;
  int64_t hMax = 1, wMax = 1, most = 1, mostAt = -1;
  for (int64_t item : items) {
    const auto& image = p.boxes.images[static_cast<size_t>(item)];
    placed.push_back(poolPlacement(image.height, image.width, transform));
    hMax = std::max(hMax, placed.back().height);
    wMax = std::max(wMax, placed.back().width);
    if (const auto boxes = static_cast<int64_t>(boxesOf[static_cast<size_t>(item)].size()); boxes > most) {
      most = boxes;
      mostAt = item;
    }
  }
  const auto n = static_cast<int64_t>(items.size());
  // Every image's targets are packed at the most boxes any image has: 3
  // million boxes in one YOLO label file passed `summary` and failed in
  // training at 3.5 GB with a raw allocator error (issue 59, item 6).
  const double targetBytes = static_cast<double>(n) * static_cast<double>(kPackedHeader + kPackedBox * most) * 4.0;
  if (const double memory = physicalMemoryBytes(); memory > 0 && targetBytes > memory / 4)
    throw DataError((mostAt >= 0 ? p.boxes.images[static_cast<size_t>(mostAt)].file : p.trainFrom) + " has " +
                    std::to_string(most) + " boxes: held for each of the " + std::to_string(n) +
                    " images, the boxes need " + std::to_string(static_cast<int64_t>(targetBytes / 1e9)) +
                    " GB, more than a quarter of this machine's memory; a detector finds at most "
                    "model.detector.detections_per_image boxes an image: check that image's annotations");
  const double bytes = static_cast<double>(n) * 3.0 * static_cast<double>(hMax) * static_cast<double>(wMax);
  if (const double memory = physicalMemoryBytes(); memory > 0 && bytes > memory / 2)
    throw DataError(p.trainFrom + ": its " + std::to_string(n) + " images held at up to " + std::to_string(hMax) + "x" +
                    std::to_string(wMax) + " need " + std::to_string(static_cast<int64_t>(bytes / 1e9)) +
                    " GB, more than half of this machine's memory: lower model.detector.max_size or "
                    "data.train_limit");

  // Decoded on all cores, each into its corner of the pool.
  if (progress.report) progress.report("decoding images", 0, n);
  torch::Tensor pool = torch::zeros({n, 3, hMax, wMax}, torch::kUInt8);
  std::mutex failed;
  std::string why;
  at::parallel_for(0, n, 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const auto& image = p.boxes.images[static_cast<size_t>(items[static_cast<size_t>(r)])];
      const Placement& at = placed[static_cast<size_t>(r)];
      try {
        torch::Tensor one = torch::empty({3, at.height, at.width}, torch::kUInt8);
        const auto [h, w] = decodeImageInto(image.file, 3, at.height, at.width, one.data_ptr<uint8_t>());
        checkAnnotatedSize(image, image.file, h, w);
        pool[r].slice(1, 0, at.height).slice(2, 0, at.width).copy_(one);
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(failed);
        if (why.empty()) why = e.what();
      }
    }
  });
  if (!why.empty()) throw DataError(why);

  // Each pool row's packed targets.
  const int64_t width = kPackedHeader + kPackedBox * most;
  torch::Tensor targets = torch::full({n, width}, -1.0, torch::kFloat32);
  auto t = targets.accessor<float, 2>();
  for (int64_t r = 0; r < n; ++r) {
    const int64_t item = items[static_cast<size_t>(r)];
    const Placement& at = placed[static_cast<size_t>(r)];
    t[r][0] = static_cast<float>(item);
    t[r][1] = static_cast<float>(at.height);
    t[r][2] = static_cast<float>(at.width);
    t[r][3] = static_cast<float>(at.scale);
    int64_t k = kPackedHeader;
    for (const auto* b : boxesOf[static_cast<size_t>(item)]) {
      t[r][k] = static_cast<float>(b->label + 1);
      t[r][k + 1] = static_cast<float>(b->x * at.scale);
      t[r][k + 2] = static_cast<float>(b->y * at.scale);
      t[r][k + 3] = static_cast<float>((b->x + b->w) * at.scale);
      t[r][k + 4] = static_cast<float>((b->y + b->h) * at.scale);
      k += kPackedBox;
    }
  }
  auto split = [&](const PlannedSplit& s, std::vector<int64_t>& positions) {
    std::vector<int64_t> rows;
    for (int64_t item : s.items) rows.push_back(std::lower_bound(items.begin(), items.end(), item) - items.begin());
    positions = s.items;
    torch::Tensor rowIndex = torch::tensor(rows, torch::kInt64);
    return std::make_shared<ExampleSet>(pool, rows, targets.index_select(0, rowIndex));
  };
  d.train = split(p.train, d.trainItems);
  d.val = split(p.val, d.valItems);
  d.test = split(p.test, d.testItems);
  d.input = {3, hMax, wMax, 0};
  d.stored = {hMax, wMax, false};
  // The detector normalises each image itself (GeneralizedRCNNTransform):
  // the loaders give pixels in [0, 1].
  d.mean.assign(3, 0.0);
  d.std.assign(3, 1.0);
  d.trainCounts = boxesPerClass(p.boxes, p.train.items, d.numClasses());
  d.valCounts = boxesPerClass(p.boxes, p.val.items, d.numClasses());
  d.testCounts = boxesPerClass(p.boxes, p.test.items, d.numClasses());
  if (p.boxes.clipped > 0 || p.boxes.skipped > 0)
    log::info(std::to_string(p.boxes.clipped) + " boxes clipped to their images and " +
              std::to_string(p.boxes.skipped) + " skipped (data.on_bad_box " + cfg.data.on_bad_box + ")");
  return d;
}

std::vector<PackedImage> unpackBatch(const torch::Tensor& x, const torch::Tensor& y) {
  const torch::Tensor host = y.to(torch::kCPU, torch::kFloat32).contiguous();
  auto t = host.accessor<float, 2>();
  const int64_t slots = (host.size(1) - kPackedHeader) / kPackedBox;
  std::vector<PackedImage> out;
  for (int64_t i = 0; i < host.size(0); ++i) {
    PackedImage im;
    im.item = static_cast<int64_t>(t[i][0]);
    const auto h = static_cast<int64_t>(t[i][1]), w = static_cast<int64_t>(t[i][2]);
    im.scale = t[i][3];
    im.image = x[i].slice(1, 0, h).slice(2, 0, w);
    int64_t k = 0;
    while (k < slots && t[i][kPackedHeader + kPackedBox * k] >= 0) ++k;
    const torch::Tensor row = y[i].slice(0, kPackedHeader, kPackedHeader + kPackedBox * k).view({k, kPackedBox});
    im.labels = row.select(1, 0).to(torch::kInt64);
    im.boxes = row.slice(1, 1, 5).to(torch::kFloat32);
    out.push_back(std::move(im));
  }
  return out;
}

}  // namespace studio::detection
