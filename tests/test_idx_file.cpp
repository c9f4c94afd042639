// IDX files: raw and gzip read alike; truncated, wrong-magic, wrong-rank and
// count-mismatched files give errors that name the file.
#include "test_support.h"

#include <zlib.h>

#include "data/idx_file.h"
#include "data/image_dataset.h"

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
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                                static_cast<std::streamsize>(bytes.size()));
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
  void imageSetHasShapesAndLabels() {
    QTemporaryDir dir;
    auto images = write(dir, "img.gz", idx({5, 3, 3}, 45), true);
    auto labels = write(dir, "lbl", idx({5}, 5), false);
    ImageSet s = loadImageSet(images, labels);
    QCOMPARE(s.images.sizes().vec(), (std::vector<int64_t>{5, 1, 3, 3}));
    QCOMPARE(s.labels.scalar_type(), torch::kInt64);
    QCOMPARE(s.labels[4].item<int64_t>(), int64_t(4));
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
    auto images = write(dir, "img", idx({5, 2, 2}, 20), false);
    auto labels = write(dir, "lbl", idx({4}, 4), false);
    expectError([&] { loadImageSet(images, labels); }, labels, "holds 5 images but");
  }
  void missingFile() {
    expectError([] { readIdxFile("/nonexistent/file-idx3-ubyte", 3); }, "/nonexistent/file-idx3-ubyte",
                "cannot open");
    DataConfig c;
    c.root = "/nonexistent-root";
    expectError([&] { loadDataSplits(c, 1); }, "/nonexistent-root/train-images-idx3-ubyte.gz", "not found");
  }
  void realFashionMnistLoads() {
    DataConfig c;
    c.val_fraction = 0.1;
    DataSplits d = loadDataSplits(c, 7);
    QCOMPARE(d.train.size() + d.val.size(), int64_t(60000));
    QCOMPARE(d.val.size(), int64_t(6000));
    QCOMPARE(d.test.size(), int64_t(10000));
    QVERIFY(d.mean > 0.2 && d.mean < 0.4);  // Fashion-MNIST's pixel mean is about 0.286
  }
};

QTEST_GUILESS_MAIN(TestIdxFile)
#include "test_idx_file.moc"
