#include "data/data_loading.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <future>
#include <map>

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
// length is ignored. Inflating Fashion-MNIST's training images took about
// 0.45 s on the H100 machine, the whole of a default run's data loading.
// The cache is an optimisation: a folder that cannot be written is no error.
torch::Tensor idxImages(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  const auto mtime = ec ? fs::file_time_type{} : fs::last_write_time(path, ec);
  std::string cacheFile;
  if (!ec) {
    const std::string key = sha256Hex(path + "\n" + std::to_string(size) + "\n" +
                                      std::to_string(mtime.time_since_epoch().count()));
    cacheFile = decodedCacheFolder() + "/idx-" + key.substr(0, 32) + ".u8";
    std::string bytes;
    try {
      if (fs::is_regular_file(cacheFile, ec)) bytes = readFileBytes(cacheFile, "cache file");
    } catch (const std::exception&) {
      bytes.clear();
    }
    int64_t dims[3] = {0, 0, 0};
    if (bytes.size() >= sizeof dims) std::memcpy(dims, bytes.data(), sizeof dims);
    const bool sane = dims[0] > 0 && dims[1] > 0 && dims[2] > 0 && dims[0] < (int64_t{1} << 32) &&
                      dims[1] < (1 << 16) && dims[2] < (1 << 16);
    if (sane && bytes.size() == sizeof dims + static_cast<size_t>(dims[0] * dims[1] * dims[2])) {
      torch::Tensor t = torch::empty({dims[0], 1, dims[1], dims[2]}, torch::kUInt8);
      std::memcpy(t.data_ptr<uint8_t>(), bytes.data() + sizeof dims, bytes.size() - sizeof dims);
      return t;
    }
  }
  IdxArray a = readIdxFile(path, 3);
  torch::Tensor t = torch::from_blob(a.data.data(), {a.dims[0], 1, a.dims[1], a.dims[2]}, torch::kUInt8).clone();
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
  return t;
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
    // The two files inflate at once (zlib is single-threaded).
    auto test = std::async(std::launch::async, [&] { return idxImages(p.idxTestImages); });
    torch::Tensor train = idxImages(p.idxTrainImages);
    torch::Tensor pool = torch::cat({train, test.get()});
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
