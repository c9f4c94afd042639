#include "data/data_loading.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "studio/data_split.h"
#include "studio/idx_file.h"

namespace studio {
namespace {

torch::Tensor idxImages(const std::string& path) {
  IdxArray a = readIdxFile(path, 3);
  return torch::from_blob(a.data.data(), {a.dims[0], 1, a.dims[1], a.dims[2]}, torch::kUInt8).clone();
}

// Maps each planned item to its row in the pool (dropping items without one).
void splitsFrom(DataSplits& d, const torch::Tensor& pool, const DataPlan& p, const std::map<int64_t, int64_t>* rowOf) {
  auto make = [&](const PlannedSplit& s, std::vector<int64_t>& items) {
    std::vector<int64_t> rows, labels;
    for (size_t i = 0; i < s.items.size(); ++i) {
      int64_t row = s.items[i];
      if (rowOf) {
        auto it = rowOf->find(row);
        if (it == rowOf->end()) continue;  // a file that could not be read, skipped
        row = it->second;
      }
      rows.push_back(row);
      labels.push_back(s.labels[i]);
      items.push_back(s.items[i]);
    }
    return std::make_shared<ExampleSet>(pool, std::move(rows), std::move(labels));
  };
  d.train = make(p.train, d.trainItems);
  d.val = make(p.val, d.valItems);
  d.test = make(p.test, d.testItems);
}

std::vector<int64_t> labelsOf(const ExampleSet& s) {
  torch::Tensor y = s.all().y.contiguous();
  return {y.data_ptr<int64_t>(), y.data_ptr<int64_t>() + y.numel()};
}

// Per channel (images, pixels in [0, 1], unbiased std) or per feature
// (tables, population std), in chunks, in double.
void statistics(DataSplits& d, bool normalize) {
  const bool image = d.kind == DataKind::Image;
  const int64_t k = image ? d.input.channels : d.input.features;
  d.mean.assign(static_cast<size_t>(k), 0.0);
  d.std.assign(static_cast<size_t>(k), 1.0);
  if (!normalize) return;
  torch::Tensor sum = torch::zeros({k}, torch::kFloat64), sq = torch::zeros({k}, torch::kFloat64);
  const int64_t n = d.train->size();
  for (int64_t start = 0; start < n; start += 4096) {
    torch::Tensor x = d.train->slice(start, std::min(n, start + 4096)).x.to(torch::kFloat64);
    if (image) x.div_(255.0);
    const std::vector<int64_t> dims = image ? std::vector<int64_t>{0, 2, 3} : std::vector<int64_t>{0};
    sum += x.sum(dims);
    sq += (x * x).sum(dims);
  }
  const double count = static_cast<double>(n) * (image ? static_cast<double>(d.input.height * d.input.width) : 1.0);
  for (int64_t c = 0; c < k; ++c) {
    const double s = sum[c].item<double>(), q = sq[c].item<double>();
    const double mean = s / count;
    const double denom = image ? std::max(count - 1.0, 1.0) : count;
    const double var = std::max(0.0, (q - s * mean) / denom);
    d.mean[static_cast<size_t>(c)] = mean;
    d.std[static_cast<size_t>(c)] = var > 1e-24 ? std::sqrt(var) : 1.0;
  }
}

}  // namespace

DataSplits loadData(const TrainConfig& cfg, const DataPlan& p, const LoadProgress& progress) {
  DataSplits d;
  d.kind = p.kind;
  d.classNames = p.classNames;
  d.input = inputShapeOf(p, cfg.data);
  if (p.format == "idx") {
    if (progress.report) progress.report("reading " + p.idxTrainImages, 0, 1);
    torch::Tensor pool = torch::cat({idxImages(p.idxTrainImages), idxImages(p.idxTestImages)});
    splitsFrom(d, pool, p, nullptr);
  } else if (p.format == "image_folder") {
    // Only the files the splits use, in one sorted list.
    std::vector<int64_t> items;
    for (const auto* s : {&p.train, &p.val, &p.test}) items.insert(items.end(), s->items.begin(), s->items.end());
    std::sort(items.begin(), items.end());
    items.erase(std::unique(items.begin(), items.end()), items.end());
    DecodeRequest request;
    for (int64_t i : items) request.files.push_back(p.files[static_cast<size_t>(i)]);
    request.channels = d.input.channels;
    request.height = d.input.height;
    request.width = d.input.width;
    request.skipBadFiles = cfg.data.on_bad_file == "skip";
    DecodedImages decoded = decodeImages(request, progress);
    std::map<int64_t, int64_t> rowOf;
    std::vector<char> bad(items.size(), 0);
    for (size_t k = 0; k < decoded.bad.size(); ++k) {
      bad[static_cast<size_t>(decoded.bad[k])] = 1;
      d.skipped.push_back(decoded.badReasons[k]);
    }
    for (size_t r = 0; r < items.size(); ++r)
      if (!bad[r]) rowOf[items[r]] = static_cast<int64_t>(r);
    splitsFrom(d, decoded.images, p, &rowOf);
    d.fromCache = decoded.fromCache;
    d.cacheFile = decoded.cacheFile;
    d.decodeSeconds = decoded.seconds;
    if (d.train->size() == 0) throw DataError("no training image of " + p.trainFrom + " could be read");
    if (d.test->size() == 0) throw DataError("no test image of " + p.testFrom + " could be read");
  } else {
    torch::Tensor pool = torch::from_blob(const_cast<float*>(p.table.x.data()), {p.table.rows, p.table.features},
                                          torch::kFloat32)
                             .clone();
    splitsFrom(d, pool, p, nullptr);
  }
  d.trainCounts = classCounts(labelsOf(*d.train), d.numClasses());
  d.valCounts = classCounts(labelsOf(*d.val), d.numClasses());
  d.testCounts = classCounts(labelsOf(*d.test), d.numClasses());
  statistics(d, cfg.data.normalize);
  return d;
}

}  // namespace studio
