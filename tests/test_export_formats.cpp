// Weights for Python (issue 10, item 3): a built-in model's export holds
// model.safetensors (read by Python's safetensors package) and model.py
// (its layers in plain PyTorch). tests/reference/check_safetensors.py loads
// them with nothing of the studio and compares the logits with the engine's;
// the safetensors bytes are checked against the format's layout here.
#include <torch/nn/init.h>

#include "models/builtin_model.h"
#include "studio/file_io.h"
#include "tensors/safetensors_file.h"
#include "tensors/tensor_archive.h"

#include <sys/resource.h>

#include <csignal>
#include <filesystem>
#include <limits>
#include "test_support.h"
#include "torch_test_support.h"

using namespace studio;

namespace {
// A run of two steps of the small CNN, in dir/runs.
RunSummary twoSteps(const QTemporaryDir& dir) {
  TrainConfig c = test::smallConfig(dir.filePath("runs"));
  c.train.max_steps = 2;
  Session s;
  s.start(c);
  return test::runToEnd(s);
}
}  // namespace

class TestExportFormats : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void pythonRebuildsTheModel_data() {
    QTest::addColumn<QString>("kind");
    QTest::addColumn<int>("width");
    QTest::addColumn<int>("depth");
    QTest::addColumn<double>("dropout");
    QTest::addColumn<int>("features");
    QTest::newRow("mlp with dropout, images") << "mlp" << 16 << 2 << 0.3 << 0;
    QTest::newRow("mlp, a table") << "mlp" << 8 << 1 << 0.0 << 13;
    QTest::newRow("cnn") << "cnn" << 8 << 3 << 0.2 << 0;
    QTest::newRow("resnet, downsampling blocks") << "resnet" << 4 << 5 << 0.0 << 0;
  }
  void pythonRebuildsTheModel() {
    QFETCH(QString, kind);
    QFETCH(int, width);
    QFETCH(int, depth);
    QFETCH(double, dropout);
    QFETCH(int, features);
    ModelConfig config;
    config.kind = kind.toStdString();
    config.width = width;
    config.depth = depth;
    config.dropout = dropout;
    InputShape input;
    if (features > 0) {
      input.features = features;
    } else {
      input.channels = 3;
      input.height = 20;
      input.width = 20;
    }
    torch::manual_seed(5);
    BuiltinModel model(config, input, 7);
    {
      // BatchNorm statistics that are not the initial ones, so that they count.
      torch::NoGradGuard noGrad;
      for (auto& [name, t] : model.namedState())
        if (name.find("running_var") != std::string::npos)
          t.uniform_(0.5, 2.0);
        else if (name.find("running_mean") != std::string::npos)
          t.normal_(0, 0.3);
    }
    model.setTraining(false);
    const torch::Tensor x = features > 0 ? torch::randn({4, features}) : torch::randn({4, 3, 20, 20});
    torch::Tensor logits;
    {
      torch::NoGradGuard noGrad;
      logits = model.forward(x).contiguous();
    }
    QTemporaryDir dir;
    const auto files = model.exportTo(dir.path().toStdString());
    QCOMPARE(files.size(), size_t(3));
    nlohmann::json c;
    c["shape"] = x.sizes().vec();
    const torch::Tensor flat = x.reshape({-1}).contiguous();
    c["input"] = std::vector<float>(flat.data_ptr<float>(), flat.data_ptr<float>() + flat.numel());
    nlohmann::json rows = nlohmann::json::array();
    for (int64_t i = 0; i < logits.size(0); ++i) {
      const torch::Tensor row = logits[i].contiguous();
      rows.push_back(std::vector<float>(row.data_ptr<float>(), row.data_ptr<float>() + row.numel()));
    }
    c["logits"] = rows;
    const QString casePath = dir.filePath("case.json");
    std::ofstream(casePath.toStdString()) << c.dump();
    const test::Ran ran = test::python("check_safetensors.py", {dir.path(), casePath});
    qInfo("%s", qPrintable(ran.output.trimmed()));
    QCOMPARE(ran.code, 0);
    QVERIFY(ran.output.contains("safetensors ok"));
  }

  // The CLI's export of a real run writes both, and names a folder it cannot
  // make (exit 2, nothing written).
  void cliExportWritesThemAndNamesABadFolder() {
    QTemporaryDir dir;
    const RunSummary r = twoSteps(dir);
    QCOMPARE(statusName(r.status), std::string("completed"));
    const QString out = dir.filePath("export");
    const test::Ran ok = test::cli({"export", QString::fromStdString(r.runDir), "--out", out});
    QCOMPARE(ok.code, 0);
    for (const char* name : {"model.pt", "model.safetensors", "model.py", "preprocess.py"})
      QVERIFY2(QFile::exists(out + "/" + name), name);
    // The card feeds the model preprocess.py's x, not zeros (issue 60, item 11).
    const QByteArray card = test::contents(out + "/README.md");
    QVERIFY2(card.contains("x = preprocess([\"photo.jpg\"])") && !card.contains("torch.zeros"), card.constData());
    QFile blocker(dir.filePath("a-file"));
    QVERIFY(blocker.open(QIODevice::WriteOnly));
    blocker.close();
    const test::Ran bad = test::cli({"export", QString::fromStdString(r.runDir), "--out", dir.filePath("a-file/x")});
    QCOMPARE(bad.code, 2);
    QVERIFY2(bad.output.contains("cannot create export folder " + dir.filePath("a-file/x")), qPrintable(bad.output));
  }

  // Issue 59, item 9: a checkpoint whose checksums hold but whose weights
  // are NaN, and a std of 0 edited into settings.json, are named by export
  // and predict (exit 2, nothing written), not blamed on the model or the
  // export's check.
  void nonFiniteWeightsAndStatisticsAreNamed() {
    namespace fs = std::filesystem;
    QTemporaryDir dir;
    const RunSummary r = twoSteps(dir);
    QCOMPARE(statusName(r.status), std::string("completed"));
    const QString images = dir.filePath("images");
    QVERIFY(QDir().mkpath(images));
    writeFileAtomically((images + "/a.pgm").toStdString(), "P5 28 28 255\n" + std::string(28 * 28, '\x40'));
    const QString nan = dir.filePath("nan-run"), zero = dir.filePath("zero-std-run");
    fs::copy(r.runDir, nan.toStdString(), fs::copy_options::recursive);
    fs::copy(r.runDir, zero.toStdString(), fs::copy_options::recursive);
    const std::string ckpt = nan.toStdString() + "/checkpoints/last.ckpt";
    c10::IValue root = loadTensorArchive(readFileBytes(ckpt, "checkpoint"), ckpt, "checkpoint");
    std::string poisoned;
    for (const auto& e : root.toGenericDict().at("model").toGenericDict()) {
      at::Tensor t = e.value().toTensor();
      if (!t.is_floating_point()) continue;
      t.view(-1)[0] = std::numeric_limits<float>::quiet_NaN();
      poisoned = e.key().toStringRef();
      break;
    }
    writeFileAtomically(ckpt, saveTensorArchive(root));  // its checksums are the new bytes'
    const std::string settings = zero.toStdString() + "/settings.json";
    nlohmann::json s = nlohmann::json::parse(readFileBytes(settings, "settings"));
    s["run_info"]["normalization"]["std"][0] = 0.0;
    writeFileAtomically(settings, s.dump(2));
    const struct {
      QString run;
      QString says;
    } cases[] = {{nan, QString::fromStdString("holds NaN or infinite weights: 1 of ")},
                 {zero, "settings.json's run_info.normalization has mean"}};
    for (const auto& c : cases) {
      const QString out = c.run + "-export";
      const test::Ran exported = test::cli({"export", c.run, "--out", out, "--which", "last"});
      QCOMPARE(exported.code, 2);
      QVERIFY2(exported.output.contains(c.says), qPrintable(exported.output));
      QVERIFY(!QFileInfo::exists(out));
      const QString csv = c.run + "-predictions.csv";
      const test::Ran predicted = test::cli({"predict", c.run, "--which", "last", "--input", images, "--out", csv});
      QCOMPARE(predicted.code, 2);
      QVERIFY2(predicted.output.contains(c.says), qPrintable(predicted.output));
      QVERIFY(!QFileInfo::exists(csv));
      if (c.run == nan)  // the tensor, by name
        QVERIFY2(exported.output.contains(QString::fromStdString(" values of " + poisoned + " ")),
                 qPrintable(exported.output));
    }
  }

  // Issue 59, item 8: an export that fails part-way (a full disk: here a
  // file-size limit, so the checkpoint's copy cannot be written after the
  // model's files were) or is killed before its end leaves no part of an
  // export: the folder as it was, so exporting there again is not refused
  // as "an earlier export?".
  void aFailedExportLeavesTheFolderAsItWas() {
    namespace fs = std::filesystem;
    QTemporaryDir dir;
    const RunSummary r = twoSteps(dir);
    QCOMPARE(statusName(r.status), std::string("completed"));
    const QString run = QString::fromStdString(r.runDir);
    const auto checkpoint = static_cast<rlim_t>(fs::file_size(r.runDir + "/checkpoints/last.ckpt"));
    const QString fresh = dir.filePath("fresh"), kept = dir.filePath("kept");
    QVERIFY(QDir().mkpath(kept));
    writeFileAtomically((kept + "/notes.txt").toStdString(), "mine\n");
    auto exportWith = [&](const QString& out, rlim_t fileLimit, const QString& crashAt) {
      QProcess p;
      p.setProcessChannelMode(QProcess::MergedChannels);
      if (!crashAt.isEmpty()) {
        QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
        e.insert("STUDIO_CRASH_AT", crashAt);
        p.setProcessEnvironment(e);
      }
      if (fileLimit > 0)
        p.setChildProcessModifier([fileLimit] {
          ::signal(SIGXFSZ, SIG_IGN);  // a write past the limit fails with EFBIG, as on a full disk
          const rlimit limit{fileLimit, fileLimit};
          ::setrlimit(RLIMIT_FSIZE, &limit);
        });
      p.start(test::env("STUDIO_CLI"), {"export", run, "--out", out, "--which", "last"});
      if (!p.waitForFinished(test::kHangLimitMs)) qFatal("export did not finish");
      return test::Ran{p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromUtf8(p.readAll())};
    };
    auto entries = [](const QString& folder) {
      return QDir(folder).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot);
    };
    const QStringList before = entries(dir.path());
    for (const QString& out : {fresh, kept}) {
      // Larger than the model's files, smaller than the checkpoint they are written before.
      const test::Ran full = exportWith(out, checkpoint / 2, "");
      QVERIFY2(full.code != 0 && full.output.contains("the export stopped and " + out + " is as it was"),
               qPrintable(full.output));
      QCOMPARE(entries(dir.path()), before);  // nothing beside it
      if (out == kept)
        QCOMPARE(entries(kept), QStringList{"notes.txt"});  // nothing in it
      else
        QVERIFY(!QFileInfo::exists(fresh));
    }
    // Killed (kill -9) before the files are in place: the folder is as it was.
    const test::Ran killed = exportWith(fresh, 0, "export-before-commit");
    QCOMPARE(killed.code, -1);
    QVERIFY(!QFileInfo::exists(fresh));
    // Exported again, in full, with the person's own file kept.
    for (const QString& out : {fresh, kept}) {
      const test::Ran ok = exportWith(out, 0, "");
      QVERIFY2(ok.code == 0, qPrintable(ok.output));
      for (const char* name : {"model.pt", "model.safetensors", "model.py", "checkpoint.ckpt", "README.md"})
        QVERIFY2(QFile::exists(out + "/" + name), name);
      QVERIFY(QFileInfo(out + "/eval").isDir());
    }
    QCOMPARE(test::readText((kept + "/notes.txt").toStdString()), std::string("mine\n"));
    QVERIFY(!entries(kept).join(" ").contains("incomplete"));
    // The killed export's staging folder went with the next export there.
    QStringList now = entries(dir.path()), expected = QStringList(before) << "fresh";
    now.sort();
    expected.sort();
    QCOMPARE(now, expected);
  }

  // The layout, byte by byte: header length, JSON header padded to 8 bytes,
  // the data back to back in the header's order.
  void safetensorsLayout() {
    const torch::Tensor a = torch::arange(6, torch::kFloat32).reshape({2, 3});
    const torch::Tensor b = torch::tensor(int64_t(42));
    const std::string bytes = safetensorsBytes({{"a", a}, {"b", b}}, {{"format", "pt"}});
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[static_cast<size_t>(i)]);
    QCOMPARE(n % 8, uint64_t(0));
    const auto header = nlohmann::json::parse(bytes.substr(8, n));
    QCOMPARE(header["a"]["dtype"].get<std::string>(), std::string("F32"));
    QCOMPARE(header["a"]["shape"], nlohmann::json({2, 3}));
    QCOMPARE(header["a"]["data_offsets"], nlohmann::json({0, 24}));
    QCOMPARE(header["b"]["dtype"].get<std::string>(), std::string("I64"));
    QCOMPARE(header["b"]["shape"], nlohmann::json::array());
    QCOMPARE(header["b"]["data_offsets"], nlohmann::json({24, 32}));
    QCOMPARE(header["__metadata__"]["format"].get<std::string>(), std::string("pt"));
    QCOMPARE(bytes.size(), size_t(8 + n + 32));
    float third = 0;
    std::memcpy(&third, bytes.data() + 8 + n + 8, 4);
    QCOMPARE(third, 2.0f);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, safetensorsBytes({{"c", torch::zeros({2}, torch::kComplexFloat)}}));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, safetensorsBytes({{"a", a}, {"a", a}}));
  }
};

QTEST_GUILESS_MAIN(TestExportFormats)
#include "test_export_formats.moc"
