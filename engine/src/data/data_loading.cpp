#include "data/data_loading.h"
#include "data/box_data.h"
#include "data/mask_data.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <mutex>

#include <ATen/Parallel.h>

#include "studio/class_weights.h"
#include "studio/data_split.h"
#include "studio/file_io.h"
#include "studio/idx_file.h"
#include "studio/sha256.h"

namespace studio {
namespace {

// IDX images are inflated once and kept in the decoded-data cache, as image
// folders are: idx-<key>.u8 holds the three dimensions (int64) and the
// pixels; the key is the SHA-256 of the file's path, size and modification
// time, so a changed file is inflated afresh, and an entry of the wrong
// length or dimensions is ignored. Inflating Fashion-MNIST's training images
// took about 0.45 s on the H100 machine, the whole of a default run's data
// loading. The cache is an optimisation: a folder that cannot be written is
// no error. The pixels go straight into `out` ([n, 1, h, w] uint8, as the
// plan read the file's header), a slice of the pool: no copy of them after.
void readIdxImages(const std::string& path, torch::Tensor out) {
  namespace fs = std::filesystem;
  const int64_t want[3] = {out.size(0), out.size(2), out.size(3)};
  const size_t pixels = static_cast<size_t>(out.numel());
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  const auto mtime = ec ? fs::file_time_type{} : fs::last_write_time(path, ec);
  std::string cacheFile;
  if (!ec) {
    const std::string key =
        sha256Hex(path + "\n" + std::to_string(size) + "\n" + std::to_string(mtime.time_since_epoch().count()));
    cacheFile = decodedCacheFolder() + "/idx-" + key.substr(0, 32) + ".u8";
    std::ifstream in(cacheFile, std::ios::binary);
    int64_t dims[3] = {0, 0, 0};
    if (in && fs::file_size(cacheFile, ec) == sizeof dims + pixels && !ec &&
        in.read(reinterpret_cast<char*>(dims), sizeof dims) && std::equal(dims, dims + 3, want) &&
        in.read(reinterpret_cast<char*>(out.data_ptr<uint8_t>()), static_cast<std::streamsize>(pixels)))
      return;
  }
  IdxArray a = readIdxFile(path, 3);
  if (a.dims[0] != want[0] || a.dims[1] != want[1] || a.dims[2] != want[2])
    throw DataError(path + " changed while the run started: it now holds " + std::to_string(a.dims[0]) + " images of " +
                    std::to_string(a.dims[1]) + "x" + std::to_string(a.dims[2]) + ", not " + std::to_string(want[0]) +
                    " of " + std::to_string(want[1]) + "x" + std::to_string(want[2]) + "; start the run again");
  std::memcpy(out.data_ptr<uint8_t>(), a.data.data(), pixels);
  if (!cacheFile.empty()) {
    try {
      fs::create_directories(fs::path(cacheFile).parent_path(), ec);
      const int64_t dims[3] = {a.dims[0], a.dims[1], a.dims[2]};
      std::string bytes(sizeof dims + a.data.size(), '\0');
      std::memcpy(bytes.data(), dims, sizeof dims);
      std::memcpy(bytes.data() + sizeof dims, a.data.data(), a.data.size());
      writeFileAtomically(cacheFile, bytes);
    } catch (const std::exception&) {
      // No cache this time; the next run inflates the file again.
    }
  }
}

// Maps each planned item to its row in the pool (dropping items without one).
// targets: a regression's, a row per item (tables: an item is its pool row).
void splitsFrom(DataSplits& d, const torch::Tensor& pool, const DataPlan& p, const std::map<int64_t, int64_t>* rowOf,
                const torch::Tensor& targets = {}) {
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
    if (targets.defined())  // by the plan's item (a table's row, a folder's file): this split's items
      return std::make_shared<ExampleSet>(pool, rows, targets.index_select(0, torch::tensor(items, torch::kInt64)));
    return std::make_shared<ExampleSet>(pool, std::move(rows), std::move(labels));
  };
  d.train = make(p.train, d.trainItems);
  d.val = make(p.val, d.valItems);
  d.test = make(p.test, d.testItems);
}

// A table's targets for every row (float32 [rows, T]): a regression's
// standardised with the training split's mean and population std (as
// scikit-learn's StandardScaler: 1 where a target does not vary there), a
// multi-label's 0/1 labels as they are.
torch::Tensor tableTargets(DataSplits& d, const DataPlan& p, bool standardize) {
  d.targetNames = p.targetNames;
  const int64_t t = static_cast<int64_t>(p.targetNames.size());
  const torch::Tensor all =
      torch::from_blob(const_cast<float*>(p.table.y.data()), {p.table.rows, t}, torch::kFloat32).to(torch::kFloat64);
  const torch::Tensor train = all.index_select(0, torch::tensor(p.train.items, torch::kInt64));
  torch::Tensor mean = torch::zeros({t}, torch::kFloat64), std = torch::ones({t}, torch::kFloat64);
  if (standardize && p.regression() && train.size(0) > 0) {
    mean = train.mean(0);
    std = train.var(0, /*unbiased=*/false).sqrt();
    std = torch::where(std > 1e-12, std, torch::ones_like(std));
  }
  d.targetMean.assign(mean.data_ptr<double>(), mean.data_ptr<double>() + t);
  d.targetStd.assign(std.data_ptr<double>(), std.data_ptr<double>() + t);
  return ((all - mean) / std).to(torch::kFloat32);
}

std::vector<int64_t> labelsOf(const ExampleSet& s) {
  torch::Tensor y = s.all().y.contiguous();
  if (y.scalar_type() != torch::kInt64) return {};  // a regression's targets
  return {y.data_ptr<int64_t>(), y.data_ptr<int64_t>() + y.numel()};
}

// Per channel (images, pixels in [0, 1], unbiased std) or per feature
// (tables, population std): 8-bit images from exact integer sums, anything
// else in chunks, in double.
void statistics(DataSplits& d, bool normalize) {
  const bool image = d.kind == DataKind::Image;
  const int64_t k = image ? d.input.channels : d.input.features;
  d.mean.assign(static_cast<size_t>(k), 0.0);
  d.std.assign(static_cast<size_t>(k), 1.0);
  if (!normalize) return;
  const int64_t n = d.train->size();
  const double count = static_cast<double>(n) * (image ? static_cast<double>(d.stored.height * d.stored.width) : 1.0);
  auto finish = [&](int64_t c, double s, double q) {
    const double mean = s / count;
    const double denom = image ? std::max(count - 1.0, 1.0) : count;
    const double var = std::max(0.0, (q - s * mean) / denom);
    d.mean[static_cast<size_t>(c)] = mean;
    d.std[static_cast<size_t>(c)] = var > 1e-24 ? std::sqrt(var) : 1.0;
  };
  if (image && n > 0 && d.train->slice(0, 1).x.scalar_type() == torch::kUInt8) {
    // 8-bit pixels: exact integer sums in one pass over the bytes, on the
    // intra-op threads (the float64 passes took 0.1-0.3 s of a Fashion-MNIST
    // run's start on the 2-core VM).
    const int64_t plane = d.stored.height * d.stored.width;  // the pixels as stored
    std::vector<uint64_t> sums(static_cast<size_t>(k), 0), squares(static_cast<size_t>(k), 0);
    std::mutex merge;
    for (int64_t start = 0; start < n; start += 4096) {
      const torch::Tensor x = d.train->slice(start, std::min(n, start + 4096)).x.contiguous();
      const uint8_t* px = x.data_ptr<uint8_t>();
      const int64_t planes = x.size(0) * k;
      auto sumPlanes = [&](int64_t begin, int64_t end) {
        std::vector<uint64_t> s(static_cast<size_t>(k), 0), q(static_cast<size_t>(k), 0);
        for (int64_t i = begin; i < end; ++i) {
          const uint8_t* p = px + i * plane;
          uint64_t ps = 0, pq = 0;
          for (int64_t j = 0; j < plane; ++j) {
            const uint32_t v = p[j];
            ps += v;
            pq += v * v;
          }
          s[static_cast<size_t>(i % k)] += ps;
          q[static_cast<size_t>(i % k)] += pq;
        }
        std::lock_guard<std::mutex> lock(merge);
        for (size_t c = 0; c < s.size(); ++c) {
          sums[c] += s[c];
          squares[c] += q[c];
        }
      };
#if defined(STUDIO_SANITIZED_THREAD)  // the tsan preset (CMakeLists.txt)
      // ThreadSanitizer cannot see libgomp's (uninstrumented) barriers: it
      // would take this thread's reads of the workers' sums for a race.
      sumPlanes(0, planes);
#else
      at::parallel_for(0, planes, 64, sumPlanes);
#endif
    }
    for (int64_t c = 0; c < k; ++c)
      finish(c, static_cast<double>(sums[static_cast<size_t>(c)]) / 255.0,
             static_cast<double>(squares[static_cast<size_t>(c)]) / (255.0 * 255.0));
    return;
  }
  torch::Tensor sum = torch::zeros({k}, torch::kFloat64), sq = torch::zeros({k}, torch::kFloat64);
  for (int64_t start = 0; start < n; start += 4096) {
    torch::Tensor x = d.train->slice(start, std::min(n, start + 4096)).x.to(torch::kFloat64);
    if (image) x.div_(255.0);
    const std::vector<int64_t> dims = image ? std::vector<int64_t>{0, 2, 3} : std::vector<int64_t>{0};
    sum += x.sum(dims);
    sq += (x * x).sum(dims);
  }
  for (int64_t c = 0; c < k; ++c) finish(c, sum[c].item<double>(), sq[c].item<double>());
}

}  // namespace

bool imagenetStatistics(const TrainConfig& cfg) {
  const auto& how = cfg.data.normalize_stats;
  return how == NormalizeStats::imagenet ||
         (how == NormalizeStats::auto_ && isTorchvisionBackbone(cfg.model.kind) && !cfg.model.weights.empty());
}

DataSplits loadData(const TrainConfig& cfg, const DataPlan& p, const LoadProgress& progress) {
  if (p.detection()) return detection::loadDetectionData(cfg, p, progress);
  if (p.segmentation()) return loadSegmentationData(cfg, p, progress);
  DataSplits d;
  d.kind = p.kind;
  d.task = p.task;
  d.classNames = p.classNames;
  d.input = inputShapeOf(p, cfg.data, cfg.model.kind);
  d.stored = storedShapeOf(d.input, cfg.data, cfg.model.kind);
  if (p.format == DataFormat::idx) {
    if (progress.report) progress.report("reading " + p.idxTrainImages, 0, 1);
    // One pool, the training images then the test images; the two files
    // inflate at once (zlib is single-threaded).
    torch::Tensor pool = torch::empty({p.idxTrainCount + p.idxTestCount, 1, p.idxHeight, p.idxWidth}, torch::kUInt8);
    auto test = std::async(std::launch::async, [&] { readIdxImages(p.idxTestImages, pool.slice(0, p.idxTrainCount)); });
    readIdxImages(p.idxTrainImages, pool.slice(0, 0, p.idxTrainCount));
    test.get();
    splitsFrom(d, pool, p, nullptr);
  } else if (p.format == DataFormat::image_folder) {
    // Only the files the splits use, in one sorted list.
    std::vector<int64_t> items;
    for (const auto* s : {&p.train, &p.val, &p.test}) items.insert(items.end(), s->items.begin(), s->items.end());
    std::sort(items.begin(), items.end());
    items.erase(std::unique(items.begin(), items.end()), items.end());
    DecodeRequest request;
    for (int64_t i : items) request.files.push_back(p.files[static_cast<size_t>(i)]);
    request.channels = d.input.channels;
    request.height = d.stored.height;
    request.width = d.stored.width;
    request.cover = d.stored.cover;
    request.skipBadFiles = cfg.data.on_bad_file == OnBadFile::skip;
    DecodedImages decoded = decodeImages(request, progress);
    std::map<int64_t, int64_t> rowOf;
    std::vector<char> bad(items.size(), 0);
    for (size_t k = 0; k < decoded.bad.size(); ++k) {
      bad[static_cast<size_t>(decoded.bad[k])] = 1;
      d.skipped.push_back(decoded.badReasons[k]);
    }
    for (size_t r = 0; r < items.size(); ++r)
      if (!bad[r]) rowOf[items[r]] = static_cast<int64_t>(r);
    splitsFrom(d, decoded.images, p, &rowOf,
               p.hasTargets() ? tableTargets(d, p, cfg.task.standardize_targets) : torch::Tensor());
    d.fromCache = decoded.fromCache;
    d.cacheFile = decoded.cacheFile;
    d.decodeSeconds = decoded.seconds;
    if (d.train->size() == 0) throw DataError("no training image of " + p.trainFrom + " could be read");
    if (d.test->size() == 0) throw DataError("no test image of " + p.testFrom + " could be read");
  } else {
    torch::Tensor pool =
        torch::from_blob(const_cast<float*>(p.table.x.data()), {p.table.rows, p.table.features}, torch::kFloat32)
            .clone();
    splitsFrom(d, pool, p, nullptr,
               p.hasTargets() ? tableTargets(d, p, cfg.task.standardize_targets) : torch::Tensor());
  }
  if (d.multilabel()) {
    const torch::Tensor positives = d.train->all().y.sum(0).to(torch::kInt64).contiguous();
    d.labelPositives.assign(positives.data_ptr<int64_t>(), positives.data_ptr<int64_t>() + positives.numel());
  }
  d.trainCounts = classCounts(labelsOf(*d.train), d.numClasses());
  d.valCounts = classCounts(labelsOf(*d.val), d.numClasses());
  d.testCounts = classCounts(labelsOf(*d.test), d.numClasses());
  if (d.multilabel())
    d.lossWeights = positiveWeights(cfg.loss.pos_weight, d.labelPositives, d.train->size(), d.targetNames);
  else if (!d.regression())
    d.lossWeights = classWeights(cfg.loss.class_weights, d.trainCounts, d.classNames);
  if (d.kind == DataKind::Image && cfg.data.normalize && imagenetStatistics(cfg)) {
    // What torchvision's weights were trained with; a 1-channel image takes
    // the average of the three channels' (its copies feed all three).
    const std::vector<double> mean = {0.485, 0.456, 0.406}, std = {0.229, 0.224, 0.225};
    if (d.input.channels == 3) {
      d.mean = mean;
      d.std = std;
    } else {
      d.mean.assign(static_cast<size_t>(d.input.channels), (mean[0] + mean[1] + mean[2]) / 3.0);
      d.std.assign(static_cast<size_t>(d.input.channels), (std[0] + std[1] + std[2]) / 3.0);
    }
  } else {
    statistics(d, cfg.data.normalize);
  }
  return d;
}

}  // namespace studio
