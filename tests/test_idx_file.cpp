// IDX files: raw and gzip read alike; truncated, wrong-magic, wrong-rank,
// damaged-gzip, oversized-header and count-mismatched files give errors that
// name the file; the first items alone read as the whole file's; the data plan of an IDX folder splits it as it says.
#include "test_support.h"

#include <zlib.h>

#include "studio/data_plan.h"
#include "studio/idx_file.h"

using namespace studio;

namespace {

std::vector<uint8_t> idx(std::vector<int32_t> dims, int payload, uint8_t magicType = 0x08) {
  std::vector<uint8_t> b = {0, 0, magicType, static_cast<uint8_t>(dims.size())};
  for (int32_t d : dims)
    for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<uint8_t>((d >> s) & 0xff));
  for (int i = 0; i < payload; ++i) b.push_back(static_cast<uint8_t>(i % 10));
  return b;
}

std::string write(const QTemporaryDir& dir, const std::string& name, const std::vector<uint8_t>& bytes, bool gz) {
  const std::string path = (dir.path() + "/").toStdString() + name;
  if (gz) {
    gzFile f = gzopen(path.c_str(), "wb");
    gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
    gzclose(f);
  } else {
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
  return path;
}

void expectError(const std::function<void()>& f, const std::string& file, const std::string& part) {
  try {
    f();
    QFAIL("expected a DataError");
  } catch (const DataError& e) {
    const std::string m = e.what();
    QVERIFY2(m.find(file) != std::string::npos, m.c_str());
    QVERIFY2(m.find(part) != std::string::npos, m.c_str());
  }
}

}  // namespace

class TestIdxFile : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void readsRawAndGzip() {
    QTemporaryDir dir;
    for (bool gz : {false, true}) {
      const auto path = write(dir, gz ? "a.gz" : "a", idx({3, 2, 4}, 24), gz);
      IdxArray a = readIdxFile(path, 3);
      QCOMPARE(a.dims, (std::vector<int64_t>{3, 2, 4}));
      QCOMPARE(a.data.size(), size_t(24));
      QCOMPARE(int(a.data[13]), 3);
    }
  }
  void theFirstItemsAreTheWholeFilesFirst() {
    // The Data tab's samples: only the file's start is read, the same bytes as the whole read's.
    QTemporaryDir dir;
    std::vector<uint8_t> bytes = idx({400, 28, 28}, 0);
    uint32_t x = 7;
    for (int i = 0; i < 400 * 784; ++i) bytes.push_back(static_cast<uint8_t>((x = x * 1103515245 + 12345) >> 24));
    for (bool gz : {false, true}) {
      const auto path = write(dir, gz ? "f.gz" : "f", bytes, gz);
      const IdxArray all = readIdxFile(path, 3);
      for (int64_t n : {0, 1, 37, 400, 1000}) {
        const IdxArray first = readIdxFirst(path, 3, n);
        const int64_t kept = std::min<int64_t>(n, 400);
        QCOMPARE(first.dims, (std::vector<int64_t>{kept, 28, 28}));
        QVERIFY(std::equal(first.data.begin(), first.data.end(), all.data.begin(), all.data.begin() + kept * 784));
        QCOMPARE(first.data.size(), size_t(kept * 784));
      }
      // A file that ends before the items asked for is named; one that ends after them is not read that far.
      const auto cut =
          write(dir, gz ? "c.gz" : "c", std::vector<uint8_t>(bytes.begin(), bytes.begin() + 16 + 50 * 784), gz);
      expectError([&] { readIdxFirst(cut, 3, 51); }, cut, "truncated");
      QCOMPARE(readIdxFirst(cut, 3, 50).dims[0], int64_t(50));
    }
    const auto huge = write(dir, "huge", idx({1, 0x0FFFFFFF, 0x0FFFFFFF}, 8), false);
    expectError([&] { readIdxFirst(huge, 3, 1); }, huge, "declares too much data");
    const auto big = write(dir, "big", idx({5000000, 4096, 4096}, 8), false);
    expectError([&] { readIdxFirst(big, 3, 1); }, big, "cannot hold them");
  }
  void planOfAnIdxFolder() {
    QTemporaryDir dir;
    write(dir, "train-images-idx3-ubyte.gz", idx({20, 3, 3}, 180), true);
    write(dir, "train-labels-idx1-ubyte", idx({20}, 20), false);
    write(dir, "t10k-images-idx3-ubyte", idx({10, 3, 3}, 90), false);
    write(dir, "t10k-labels-idx1-ubyte.gz", idx({10}, 10), true);
    TrainConfig c;
    c.data.root = dir.path().toStdString();
    c.data.dataset = IdxDataset::mnist;
    c.data.val_fraction = 0.5;  // one of each class's two training images
    const DataPlan p = planData(c);
    QCOMPARE(p.classes(), int64_t(10));
    QCOMPARE(p.classNames.front(), std::string("0"));
    QCOMPARE(p.idxHeight, int64_t(3));
    QCOMPARE(p.train.size(), int64_t(10));
    QCOMPARE(p.val.size(), int64_t(10));
    QCOMPARE(p.test.size(), int64_t(10));
    std::vector<int64_t> valLabels = p.val.labels;
    std::sort(valLabels.begin(), valLabels.end());
    for (int64_t k = 0; k < 10; ++k) QCOMPARE(valLabels[static_cast<size_t>(k)], k);  // stratified
    QVERIFY(p.test.items.front() >= p.idxTrainCount);
    c.data.test_limit = 4;
    QCOMPARE(planData(c).test.size(), int64_t(4));
  }
  void testImagesOfAnotherSize() {
    QTemporaryDir dir;
    write(dir, "train-images-idx3-ubyte", idx({2, 3, 3}, 18), false);
    write(dir, "train-labels-idx1-ubyte", idx({2}, 2), false);
    const auto test = write(dir, "t10k-images-idx3-ubyte", idx({2, 4, 4}, 32), false);
    write(dir, "t10k-labels-idx1-ubyte", idx({2}, 2), false);
    TrainConfig c;
    c.data.root = dir.path().toStdString();
    expectError([&] { planData(c); }, test, "are 4x4 but the training images");
  }
  void damagedGzipIsAnError() {
    QTemporaryDir dir;
    // Varied bytes so the compressed stream is long enough to damage mid-way.
    std::vector<uint8_t> bytes = idx({400, 28, 28}, 0);
    uint32_t x = 12345;
    for (int i = 0; i < 400 * 784; ++i) bytes.push_back(static_cast<uint8_t>((x = x * 1103515245 + 12345) >> 24));
    const auto p = write(dir, "d.gz", bytes, true);
    std::string gz = test::readText(p);
    for (size_t i = gz.size() / 2; i < gz.size() / 2 + 1000; ++i) gz[i] = static_cast<char>(~gz[i]);
    std::ofstream(p, std::ios::binary | std::ios::trunc).write(gz.data(), static_cast<std::streamsize>(gz.size()));
    expectError([&] { readIdxFile(p, 3); }, p, "is damaged");
  }
  void sizesWhoseProductOverflowsAreRefused() {
    // Found by fuzz_idx: three sizes near 2^28 multiply beyond 64 bits.
    QTemporaryDir dir;
    const auto p = write(dir, "huge", idx({0x0FFFFFFF, 0x0FFFFFFF, 0x0FFFFFFF}, 8), false);
    expectError([&] { readIdxFile(p, 3); }, p, "declares too much data");
  }
  void oversizedHeaderIsRefusedBeforeAllocating() {
    QTemporaryDir dir;
    // 59 bytes declaring 5,000,000 images of 28x28 (3.9 GB).
    auto bytes = idx({5000000, 28, 28}, 43);
    const auto p = write(dir, "big", bytes, false);
    expectError([&] { readIdxFile(p, 3); }, p, "cannot hold them");
  }
  void truncatedFile() {
    QTemporaryDir dir;
    for (bool gz : {false, true}) {
      auto p = write(dir, gz ? "t.gz" : "t", idx({10, 28, 28}, 1000), gz);
      expectError([&] { readIdxFile(p, 3); }, p, "truncated");
    }
    auto header = write(dir, "h", {0, 0, 8, 3, 0, 0}, false);
    expectError([&] { readIdxFile(header, 3); }, header, "truncated inside its header");
  }
  void wrongMagic() {
    QTemporaryDir dir;
    auto p = write(dir, "m", {'P', 'K', 3, 4, 0, 0, 0, 0}, false);
    expectError([&] { readIdxFile(p, 3); }, p, "wrong magic number");
    auto floats = write(dir, "f", idx({2}, 2, 0x0d), false);
    expectError([&] { readIdxFile(floats, 1); }, floats, "wrong magic number");
    auto rank = write(dir, "r", idx({2, 2}, 4), false);
    expectError([&] { readIdxFile(rank, 3); }, rank, "has 2 dimensions (expected 3)");
  }
  void trailingData() {
    QTemporaryDir dir;
    auto bytes = idx({4}, 4);
    bytes.push_back(7);
    auto p = write(dir, "x", bytes, false);
    expectError([&] { readIdxFile(p, 1); }, p, "more data than its header declares");
  }
  void countMismatch() {
    QTemporaryDir dir;
    write(dir, "train-images-idx3-ubyte", idx({5, 2, 2}, 20), false);
    auto labels = write(dir, "train-labels-idx1-ubyte", idx({4}, 4), false);
    write(dir, "t10k-images-idx3-ubyte", idx({2, 2, 2}, 8), false);
    write(dir, "t10k-labels-idx1-ubyte", idx({2}, 2), false);
    TrainConfig c;
    c.data.root = dir.path().toStdString();
    expectError([&] { planData(c); }, labels, "holds 5 images but");
  }
  void missingFile() {
    expectError([] { readIdxFile("/nonexistent/file-idx3-ubyte", 3); }, "/nonexistent/file-idx3-ubyte", "cannot open");
    TrainConfig c;
    c.data.root = "/nonexistent-root";
    expectError([&] { planData(c); }, "/nonexistent-root/train-images-idx3-ubyte.gz", "not found");
  }
  void realFashionMnistPlans() {
    TrainConfig c;
    c.data.val_fraction = 0.1;
    const DataPlan p = planData(c);
    QCOMPARE(p.train.size() + p.val.size(), int64_t(60000));
    QCOMPARE(p.val.size(), int64_t(6000));  // 600 of each class's 6000
    QCOMPARE(p.test.size(), int64_t(10000));
    QCOMPARE(p.classNames[9], std::string("Ankle boot"));
  }
};

QTEST_GUILESS_MAIN(TestIdxFile)
#include "test_idx_file.moc"
