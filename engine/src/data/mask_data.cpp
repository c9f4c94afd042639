#include "data/mask_data.h"

#include <algorithm>
#include <exception>
#include <mutex>
#include <string>
#include <tuple>

#include <ATen/Parallel.h>

#include "data/decoded_images.h"
#include "data/mask_augment.h"
#include "studio/errors.h"
#include "studio/image_file.h"
#include "studio/machine_memory.h"
#include "studio/mask_file.h"
#include "studio/plan_masks.h"

namespace studio {
namespace {

struct Placed {
  int64_t height = 0, width = 0;  // the file's
  int64_t poolHeight = 0, poolWidth = 0;
  double scale = 1;
};

// At its own size, or its shorter side shrunk to `most` (as v2's resize
// computes the longer side: int(most * longer / shorter)).
Placed placeMasked(int64_t height, int64_t width, int64_t most) {
  Placed p{height, width, height, width, 1.0};
  const int64_t shorter = std::min(height, width);
  if (shorter <= most) return p;
  std::tie(p.poolHeight, p.poolWidth) = shorterSideSize(height, width, most);
  p.scale = static_cast<double>(most) / static_cast<double>(shorter);
  return p;
}

}  // namespace

DataSplits loadSegmentationData(const TrainConfig& cfg, const DataPlan& p, const LoadProgress& progress) {
  DataSplits d;
  d.kind = DataKind::Image;
  d.task = p.task;
  d.classNames = p.classNames;
  const int64_t classes = p.classes(), ignore = cfg.data.ignore_index;
  const int64_t most = 2 * cfg.model.segmenter.base_size;

  std::vector<int64_t> items;
  for (const auto* s : {&p.train, &p.val, &p.test}) items.insert(items.end(), s->items.begin(), s->items.end());
  std::sort(items.begin(), items.end());
  items.erase(std::unique(items.begin(), items.end()), items.end());
  const auto n = static_cast<int64_t>(items.size());
  if (progress.report) progress.report("reading the images' sizes", 0, n);
  std::vector<Placed> placed;
  int64_t hMax = 1, wMax = 1;
  for (int64_t item : items) {
    const ImageHeader h = readImageHeader(p.files[static_cast<size_t>(item)]);
    placed.push_back(placeMasked(h.height, h.width, most));
    hMax = std::max(hMax, placed.back().poolHeight);
    wMax = std::max(wMax, placed.back().poolWidth);
  }
  const double bytes = static_cast<double>(n) * 4.0 * static_cast<double>(hMax) * static_cast<double>(wMax);
  if (const double memory = physicalMemoryBytes(); memory > 0 && bytes > memory / 2)
    throw DataError(p.trainFrom + ": its " + std::to_string(n) + " images and masks held at up to " +
                    std::to_string(hMax) + "x" + std::to_string(wMax) + " need " +
                    std::to_string(static_cast<int64_t>(bytes / 1e9)) +
                    " GB, more than half of this machine's memory: lower model.segmenter.base_size or "
                    "data.train_limit");

  if (progress.report) progress.report("decoding images and masks", 0, n);
  torch::Tensor pool = torch::zeros({n, 4, hMax, wMax}, torch::kUInt8);
  pool.select(1, 3).fill_(static_cast<uint8_t>(ignore));
  std::mutex failed;
  std::string why;
  at::parallel_for(0, n, 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const auto item = static_cast<size_t>(items[static_cast<size_t>(r)]);
      const Placed& at = placed[static_cast<size_t>(r)];
      try {
        const std::string maskFile = itemMaskSource(p, static_cast<int64_t>(item));
        Mask mask = itemMask(p, static_cast<int64_t>(item));
        if (const std::string problem =
                maskProblem(mask, maskFile, at.height, at.width, classes, static_cast<int>(ignore));
            !problem.empty())
          throw DataError(problem);
        MaskedImage m{decodeImageTensor(p.files[item], 3, at.height, at.width),
                      torch::from_blob(mask.values.data(), {mask.height, mask.width}, torch::kUInt8)};
        if (at.scale != 1.0) m = resizeShorterSide(m, std::min(at.poolHeight, at.poolWidth));
        pool[r].slice(1, 0, at.poolHeight).slice(2, 0, at.poolWidth).slice(0, 0, 3).copy_(m.image);
        pool[r][3].slice(0, 0, at.poolHeight).slice(1, 0, at.poolWidth).copy_(m.mask);
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(failed);
        if (why.empty()) why = e.what();
      }
    }
  });
  if (!why.empty()) throw DataError(why);

  torch::Tensor headers = torch::empty({n, kMaskedHeader}, torch::kFloat32);
  auto h = headers.accessor<float, 2>();
  // Each row's pixels per class (the ignored and the padding left out).
  torch::Tensor counts = torch::zeros({n, classes}, torch::kInt64);
  for (int64_t r = 0; r < n; ++r) {
    const Placed& at = placed[static_cast<size_t>(r)];
    h[r][0] = static_cast<float>(items[static_cast<size_t>(r)]);
    h[r][1] = static_cast<float>(at.poolHeight);
    h[r][2] = static_cast<float>(at.poolWidth);
    h[r][3] = static_cast<float>(at.scale);
    const torch::Tensor m = pool[r][3].slice(0, 0, at.poolHeight).slice(1, 0, at.poolWidth).to(torch::kInt64);
    counts[r] = torch::bincount(m.flatten(), {}, ignore + 1).slice(0, 0, classes);
  }
  auto split = [&](const PlannedSplit& s, std::vector<int64_t>& positions, std::vector<int64_t>& pixels) {
    std::vector<int64_t> rows;
    for (int64_t item : s.items) rows.push_back(std::lower_bound(items.begin(), items.end(), item) - items.begin());
    positions = s.items;
    const torch::Tensor rowIndex = torch::tensor(rows, torch::kInt64);
    const torch::Tensor sum = counts.index_select(0, rowIndex).sum(0).contiguous();
    pixels.assign(sum.data_ptr<int64_t>(), sum.data_ptr<int64_t>() + classes);
    return std::make_shared<ExampleSet>(pool, rows, headers.index_select(0, rowIndex));
  };
  d.train = split(p.train, d.trainItems, d.trainCounts);
  d.val = split(p.val, d.valItems, d.valCounts);
  d.test = split(p.test, d.testItems, d.testCounts);
  d.input = {3, hMax, wMax, 0};
  d.stored = {hMax, wMax, false};
  // The references normalise with ImageNet's statistics (the backbones'
  // weights were trained with them); the task applies them after its
  // augmentations.
  if (cfg.data.normalize) {
    d.mean = {0.485, 0.456, 0.406};
    d.std = {0.229, 0.224, 0.225};
  } else {
    d.mean.assign(3, 0.0);
    d.std.assign(3, 1.0);
  }
  return d;
}

std::vector<MaskedRow> unpackMaskedBatch(const torch::Tensor& x, const torch::Tensor& y) {
  const torch::Tensor host = y.to(torch::kCPU, torch::kFloat32).contiguous();
  auto t = host.accessor<float, 2>();
  std::vector<MaskedRow> out;
  for (int64_t i = 0; i < host.size(0); ++i) {
    MaskedRow row;
    row.item = static_cast<int64_t>(t[i][0]);
    const auto h = static_cast<int64_t>(t[i][1]), w = static_cast<int64_t>(t[i][2]);
    row.scale = t[i][3];
    const torch::Tensor at = x[i].slice(1, 0, h).slice(2, 0, w);
    row.image = at.slice(0, 0, 3);
    row.mask = at[3];
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace studio
