// The memory techniques (issue 8): activation checkpointing, the
// out-of-memory back-off and batch-find, on the CPU, where
// memory.cpu_limit_mib turns a full memory into the same
// c10::OutOfMemoryError a full GPU raises.
//  - Checkpointing recomputes each segment in the backward pass: the
//    gradients, BatchNorm statistics and dropout masks equal those without
//    it, bit for bit (also under bf16 autocast), and the peak memory of a
//    step of a deep residual network is lower (counted by CpuMemoryMeter).
//  - A step that runs out of memory is made again with half the micro-batch
//    and twice the accumulation: the run equals, bit for bit, one started
//    with that micro-batch and accumulation.
//  - batch-find's largest micro-batch trains, and the size it found too
//    large runs out of memory in a real run.
#include <ATen/autocast_mode.h>
#include <c10/core/CPUAllocator.h>

#include <torch/nn/functional/loss.h>
#include <cstring>
#include <fstream>
#include <optional>

#include "models/autocast_scope.h"
#include "models/builtin_model.h"
#include "test_support.h"
#include "torch_test_support.h"
#include "train/cpu_memory.h"

using namespace studio;

namespace {

ModelConfig modelOf(const std::string& kind, int width, int depth, double dropout = 0) {
  ModelConfig m;
  m.kind = kind;
  m.width = width;
  m.depth = depth;
  m.dropout = dropout;
  return m;
}

InputShape imageShape() {
  InputShape s;
  s.channels = 1;
  s.height = 28;
  s.width = 28;
  return s;
}

struct StepResult {
  std::vector<torch::Tensor> grads, buffers;
  torch::Tensor loss;
};

// One forward and backward pass of a fresh model (seeded) on a fixed batch.
StepResult step(const ModelConfig& config, int64_t checkpointBlocks, bool bf16, std::string* applied = nullptr) {
  torch::manual_seed(7);
  BuiltinModel model(config, imageShape(), 10);
  if (checkpointBlocks >= 0) {
    const std::string what = model.checkpointActivations(checkpointBlocks);
    if (applied) *applied = what;
  }
  model.setTraining(true);
  torch::manual_seed(11);
  const torch::Tensor x = torch::randn({16, 1, 28, 28});
  const torch::Tensor y = torch::randint(0, 10, {16});
  torch::Tensor logits;
  {
    AutocastScope ac(at::kCPU, bf16, at::kBFloat16);
    logits = model.forward(x);
  }
  StepResult r;
  r.loss = torch::nn::functional::cross_entropy(logits.to(torch::kFloat32), y);
  r.loss.backward();
  for (auto& p : model.parameters()) r.grads.push_back(p.grad().clone());
  for (auto& b : model.buffers()) r.buffers.push_back(b.clone());
  return r;
}

TrainConfig runConfig(const QString& dir) {
  TrainConfig c = test::smallConfig(dir);
  c.model.width = 32;
  c.model.depth = 2;
  c.data.train_limit = 1024;
  c.data.test_limit = 200;
  c.train.batch_size = 256;
  c.train.log_every_steps = 1;
  c.optimizer.lr = 0.01;
  c.evaluation.batch_size = 50;
  c.loader.mode = LoaderMode::device;
  return c;
}

nlohmann::json summaryOf(const std::string& runDir) {
  return nlohmann::json::parse(test::readText(runDir + "/summary.json"));
}

}  // namespace

class TestMemoryTechniques : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void checkpointedGradientsEqual_data() {
    QTest::addColumn<QString>("kind");
    QTest::addColumn<int>("depth");
    QTest::addColumn<double>("dropout");
    QTest::addColumn<int>("blocks");
    QTest::addColumn<bool>("bf16");
    QTest::newRow("resnet, batch norm, auto") << "resnet" << 6 << 0.0 << 0 << false;
    QTest::newRow("resnet, every block, bf16 autocast") << "resnet" << 4 << 0.0 << 1 << true;
    QTest::newRow("cnn stages, every 1") << "cnn" << 3 << 0.0 << 1 << false;
    QTest::newRow("mlp with dropout, every 2") << "mlp" << 5 << 0.3 << 2 << false;
    QTest::newRow("mlp with dropout, auto, bf16") << "mlp" << 4 << 0.5 << 0 << true;
  }
  void checkpointedGradientsEqual() {
    QFETCH(QString, kind);
    QFETCH(int, depth);
    QFETCH(double, dropout);
    QFETCH(int, blocks);
    QFETCH(bool, bf16);
    const ModelConfig config = modelOf(kind.toStdString(), 8, depth, dropout);
    std::string applied;
    const StepResult plain = step(config, -1, bf16);
    const StepResult recomputed = step(config, blocks, bf16, &applied);
    QVERIFY2(applied.find("recomputed") != std::string::npos, applied.c_str());
    QVERIFY(torch::equal(plain.loss, recomputed.loss));
    QCOMPARE(recomputed.grads.size(), plain.grads.size());
    for (size_t i = 0; i < plain.grads.size(); ++i)
      QVERIFY2(torch::equal(plain.grads[i], recomputed.grads[i]), qPrintable(QString("gradient %1").arg(i)));
    // BatchNorm's running statistics were updated once, not twice.
    for (size_t i = 0; i < plain.buffers.size(); ++i)
      QVERIFY2(torch::equal(plain.buffers[i], recomputed.buffers[i]), qPrintable(QString("buffer %1").arg(i)));
    // Recomputation without dropout's saved random state would differ: the
    // check above can fail (a model with dropout draws new masks otherwise).
  }

  void checkpointingPlans() {
    BuiltinModel small(modelOf("cnn", 8, 2), imageShape(), 10);
    QVERIFY(QString::fromStdString(small.checkpointActivations(2)).startsWith("nothing to recompute"));
    BuiltinModel deep(modelOf("resnet", 8, 8), imageShape(), 10);  // the stem and 8 residual blocks
    QCOMPARE(deep.checkpointActivations(3),
             std::string("6 of 9 blocks recomputed, in 2 segment(s) of 3, 3 block(s); the last 3 block(s) and the "
                         "classifier keep their activations"));
    // auto: 3 segments' worth of activation memory each. Per example (by
    // hand): the stem outputs 3 tensors of 8x28x28 = 18816 values, blocks 0-1
    // keep 7 x 6272 = 43904 each, blocks 2-3 (16x14x14) 21952, blocks 4-5
    // (32x7x7) 10976, blocks 6-7 (64x4x4) 7168 (+128 pooled). Total 186944,
    // budget 62315: cut before block 0 (18816 + 43904 > budget), 1, 2, and
    // 5 (21952 + 21952 + 10976 + 10976 > budget).
    QCOMPARE(deep.checkpointActivations(0),
             std::string("6 of 9 blocks recomputed, in 4 segment(s) of 1, 1, 1, 3 block(s); the last 3 block(s) and "
                         "the classifier keep their activations"));
  }

  // The peak of tensor memory over one forward and backward pass of a deep
  // residual network, above what was live before it.
  void checkpointingLowersPeakMemory() {
    struct Memory {
      int64_t kept, peak;
    };
    auto stepMemory = [](int64_t blocks) {
      torch::manual_seed(3);
      BuiltinModel model(modelOf("resnet", 16, 10), imageShape(), 10);
      if (blocks >= 0) model.checkpointActivations(blocks);
      model.setTraining(true);
      const torch::Tensor x = torch::randn({32, 1, 28, 28});
      const torch::Tensor y = torch::randint(0, 10, {32});
      int64_t grads = 0;
      for (auto& p : model.parameters()) grads += p.numel() * 4;
      CpuMemoryMeter meter;
      torch::Tensor loss = torch::nn::functional::cross_entropy(model.forward(x), y);
      const int64_t kept = meter.liveBytes();
      loss.backward();
      return Memory{kept, meter.peakBytes() - grads};
    };
    const Memory plain = stepMemory(-1), recomputed = stepMemory(0);
    qInfo(
        "after the forward pass: %.1f MiB without, %.1f MiB with checkpointing; peak of the step less the "
        "gradients: %.1f and %.1f MiB (%.2fx)",
        plain.kept / 1048576.0, recomputed.kept / 1048576.0, plain.peak / 1048576.0, recomputed.peak / 1048576.0,
        double(recomputed.peak) / double(plain.peak));
    QVERIFY(plain.kept > 0 && plain.peak > 0);
    QVERIFY(recomputed.kept < plain.kept / 2);
    QVERIFY(recomputed.peak < plain.peak * 0.7);
  }

  // A block may cross the meter's start or end (oneDNN frees through
  // whichever CPU allocator is current: cpu_memory.cpp says why); the meter's
  // size header once made such a crossing free a pointer the heap never gave
  // out (SIGSEGV in tcmalloc, in test_window_form and test_window_review).
  void blocksCrossTheMeterBothWays() {
    // Blocks of one size, every other one freed across the meter, the rest
    // kept with a pattern; then new blocks of that size written over: the
    // kept ones must keep their pattern (a pointer freed that the heap never
    // gave out hands out memory overlapping its neighbours).
    auto cross = [](size_t size, bool freedUnderTheMeter) {
      std::vector<void*> blocks;
      std::optional<CpuMemoryMeter> meter;
      if (!freedUnderTheMeter) meter.emplace();
      for (int i = 0; i < 64; ++i) blocks.push_back(c10::GetAllocator(c10::DeviceType::CPU)->raw_allocate(size));
      if (freedUnderTheMeter)
        meter.emplace();
      else
        meter.reset();
      for (size_t i = 0; i < blocks.size(); i += 2) c10::GetAllocator(c10::DeviceType::CPU)->raw_deallocate(blocks[i]);
      meter.reset();
      for (size_t i = 1; i < blocks.size(); i += 2) std::memset(blocks[i], 0xAB, size);
      std::vector<std::vector<uint8_t>*> fresh;
      for (int i = 0; i < 256; ++i) fresh.push_back(new std::vector<uint8_t>(size, 0x11));
      bool whole = true;
      for (size_t i = 1; i < blocks.size(); i += 2) {
        const auto* b = static_cast<const uint8_t*>(blocks[i]);
        whole = whole && std::all_of(b, b + size, [](uint8_t v) { return v == 0xAB; });
        c10::GetAllocator(c10::DeviceType::CPU)->raw_deallocate(blocks[i]);
      }
      for (auto* f : fresh) delete f;
      return whole;
    };
    QVERIFY2(cross(4096, true), "blocks allocated before the meter, freed under it");
    QVERIFY2(cross(4096, false), "blocks allocated under the meter, freed after it");
  }

  void runWithCheckpointingEqualsRunWithout() {
    QTemporaryDir dir;
    TrainConfig c = test::smallConfig(dir.path());
    c.model.kind = "resnet";
    c.model.width = 4;
    c.model.depth = 3;
    c.model.dropout = 0.2;
    c.train.max_steps = 6;
    std::vector<std::string> runs;
    for (const char* mode : {"off", "auto"}) {
      c.memory.activation_checkpointing.setName(mode);
      Session s;
      s.start(c);
      const RunSummary r = test::runToEnd(s);
      QCOMPARE(statusName(r.status), std::string("completed"));
      runs.push_back(r.runDir);
    }
    QVERIFY(test::readText(runs[1] + "/log.txt").find("activation checkpointing (auto): 3 of 4 blocks recomputed") !=
            std::string::npos);
    const auto a = test::metricRows(runs[0], RecordKind::Train), b = test::metricRows(runs[1], RecordKind::Train);
    QCOMPARE(b.size(), a.size());
    for (size_t i = 0; i < a.size(); ++i) QCOMPARE(b[i].trainLoss, a[i].trainLoss);
    auto wa = test::stateOf(*test::weightsOf(runs[0])), wb = test::stateOf(*test::weightsOf(runs[1]));
    for (auto& [name, t] : wa) QVERIFY2(torch::equal(t, wb[name]), name.c_str());
  }

  void checkpointingRefusedForTorchScript() {
    TrainConfig c;
    c.model.kind = "torchscript";
    c.model.path = "/tmp/net.ts";
    c.memory.activation_checkpointing = ActivationCheckpointing::auto_;
    bool found = false;
    for (const auto& e : validate(c))
      found = found || (e.field == "memory.activation_checkpointing" &&
                        e.message.find("not on a TorchScript model") != std::string::npos);
    QVERIFY(found);
    c.memory.activation_checkpointing.setName("sometimes");
    c.model.kind = "cnn";
    found = false;
    for (const auto& e : validate(c)) found = found || e.field == "memory.activation_checkpointing";
    QVERIFY(found);
  }

  // 32 MiB holds the default CNN's step at 64 examples but not at 128 or 256.
  void outOfMemoryHalvesTheMicroBatch() {
    QTemporaryDir dir;
    TrainConfig c = runConfig(dir.path());
    c.model.dropout = 0.2;  // the failed tries must not use up random draws either
    c.memory.cpu_limit_mib = 32;
    std::vector<MetricRecord> live;
    Session s;
    s.start(c);
    const RunSummary limited = test::runToEnd(s, &live);
    QCOMPARE(statusName(limited.status), std::string("completed"));
    const auto backoffs = test::metricRows(limited.runDir, RecordKind::OomBackoff);
    QCOMPARE(backoffs.size(), size_t(2));
    QCOMPARE(backoffs[0].microBatch, int64_t(128));
    QCOMPARE(backoffs[1].microBatch, int64_t(64));
    QCOMPARE(backoffs[1].step, int64_t(1));
    QCOMPARE(std::count_if(live.begin(), live.end(), [](auto& r) { return r.kind == RecordKind::OomBackoff; }), 2);
    const auto rows = test::metricRows(limited.runDir, RecordKind::Train);
    QCOMPARE(rows.size(), size_t(4));
    for (const auto& r : rows) QCOMPARE(r.microBatch, int64_t(64));
    QCOMPARE(summaryOf(limited.runDir)["micro_batch"].get<int64_t>(), int64_t(64));
    QVERIFY(
        test::readText(limited.runDir + "/log.txt").find("going on with micro-batches of 64, 4 per optimizer step") !=
        std::string::npos);

    // The same run started with micro-batches of 64 and 4 accumulated.
    c.memory.cpu_limit_mib = 0;
    c.train.batch_size = 64;
    c.train.accumulation_steps = 4;
    Session t;
    t.start(c);
    const RunSummary planned = test::runToEnd(t);
    const auto want = test::metricRows(planned.runDir, RecordKind::Train);
    QCOMPARE(want.size(), rows.size());
    for (size_t i = 0; i < rows.size(); ++i) QCOMPARE(rows[i].trainLoss, want[i].trainLoss);
    QCOMPARE(limited.test.figures["eval_loss"], planned.test.figures["eval_loss"]);
    auto wa = test::stateOf(*test::weightsOf(limited.runDir)), wb = test::stateOf(*test::weightsOf(planned.runDir));
    for (auto& [name, t] : wa) QVERIFY2(torch::equal(t, wb[name]), name.c_str());
  }

  // A stopped run that backed off resumes with its smaller micro-batch: no
  // new out-of-memory tries, the same losses as an uninterrupted run.
  void resumeKeepsTheSmallerMicroBatch() {
    QTemporaryDir dir;
    TrainConfig c = runConfig(dir.path());
    c.memory.cpu_limit_mib = 32;
    Session whole;
    whole.start(c);
    const RunSummary straight = test::runToEnd(whole);
    const RunSummary resumed = test::stopThenResume(c, 2);
    QCOMPARE(statusName(resumed.status), std::string("completed"));
    QCOMPARE(test::metricRows(resumed.runDir, RecordKind::OomBackoff).size(), size_t(2));  // from before the stop
    const auto rows = test::metricRows(resumed.runDir, RecordKind::Train);
    const auto want = test::metricRows(straight.runDir, RecordKind::Train);
    QCOMPARE(rows.size(), want.size());
    for (size_t i = 0; i < rows.size(); ++i) {
      QCOMPARE(rows[i].microBatch, int64_t(64));
      QCOMPARE(rows[i].trainLoss, want[i].trainLoss);
    }
  }

  void outOfMemoryWithoutBackoffFails() {
    QTemporaryDir dir;
    TrainConfig c = runConfig(dir.path());
    c.memory.cpu_limit_mib = 32;
    c.memory.oom_backoff = false;
    Session s;
    s.start(c);
    const RunSummary r = test::runToEnd(s);
    QCOMPARE(statusName(r.status), std::string("failed"));
    QVERIFY2(r.error.find("out of memory on cpu") != std::string::npos &&
                 r.error.find("at step 1 with train.batch_size 256") != std::string::npos &&
                 r.error.find("or turn on memory.oom_backoff") != std::string::npos,
             r.error.c_str());
    QVERIFY(!r.badInput);
    QVERIFY(test::metricRows(r.runDir, RecordKind::OomBackoff).empty());
    QVERIFY(QFile::exists(QString::fromStdString(r.runDir + "/settings.json")));
  }

  void limitBelowTheModelIsBadInput() {
    QTemporaryDir dir;
    TrainConfig c = runConfig(dir.path());
    c.model.kind = "resnet";  // 2.4 MiB in one of its convolutions' weights
    c.model.width = 64;
    c.model.depth = 6;
    c.memory.cpu_limit_mib = 1;
    Session s;
    s.start(c);
    const RunSummary r = test::runToEnd(s);
    QCOMPARE(statusName(r.status), std::string("failed"));
    QVERIFY2(r.error.find("while setting up, before any step") != std::string::npos &&
                 r.error.find("raise memory.cpu_limit_mib") != std::string::npos,
             r.error.c_str());
    QVERIFY(r.badInput);
    const test::Ran ran = test::cli({"train", "--preset", "fashion-mnist-cnn", "--set", "memory.cpu_limit_mib=1",
                                     "--set", "model.kind=resnet", "--set", "model.width=64", "--set",
                                     "performance.device=cpu", "--set", "data.train_limit=512", "--out", dir.path()});
    QCOMPARE(ran.code, 2);
    QVERIFY2(ran.output.contains("while setting up, before any step"), qPrintable(ran.output));
  }

  // Issue 29, item 3: the process that ran batch-find (the window) keeps
  // none of its tries: its resident memory afterwards is within a few tens
  // of MiB of before, though the tries filled hundreds. Before the fix the
  // heap kept them (13.5 GB in a window that had tried sizes on the CPU).
  void batchFindGivesItsMemoryBack() {
    if (test::kSanitized)
      QSKIP("a sanitizer's allocator keeps freed memory in quarantine; the heap is released only in plain builds");
    const auto residentMiB = [] {
      std::ifstream status("/proc/self/status");
      std::string line;
      while (std::getline(status, line))
        if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
      return -1.0;
    };
    QTemporaryDir dir;
    TrainConfig c = runConfig(dir.path());
    c.data.train_limit = 8192;
    c.memory.cpu_limit_mib = 512;
    {  // the data and LibTorch's own start-up once, so that "before" has them
      Session warm;
      TrainConfig w = c;
      w.train.max_steps = 1;
      warm.start(w);
      QCOMPARE(statusName(test::runToEnd(warm).status), std::string("completed"));
    }
    const double before = residentMiB();
    Session s;
    s.findBatchSize(c, {});
    const RunSummary r = test::runToEnd(s);
    QCOMPARE(statusName(r.status), std::string("completed"));
    QVERIFY(r.batchFind.largest >= 1024);  // the tries used hundreds of MiB
    const double after = residentMiB();
    QVERIFY2(after < before + 64, qPrintable(QString("%1 MiB before, %2 after").arg(before).arg(after)));
  }

  // batch-find's answer, tried in real runs: its largest micro-batch trains
  // without backing off, the size it found too large runs out of memory.
  void batchFindFindsTheEdge() {
    QTemporaryDir dir;
    TrainConfig c = runConfig(dir.path());
    c.train.batch_size = 96;
    c.train.accumulation_steps = 3;  // effective 288
    c.memory.cpu_limit_mib = 64;
    Session s;
    s.findBatchSize(c, {});
    const RunSummary r = test::runToEnd(s);
    QCOMPARE(statusName(r.status), std::string("completed"));
    QVERIFY(QString::fromStdString(r.runDir).endsWith("-batch-find"));
    const int64_t largest = r.batchFind.largest;
    int64_t tooLarge = 0;
    for (const auto& [n, fits] : r.batchFind.tried)
      if (!fits && (tooLarge == 0 || n < tooLarge)) tooLarge = n;
    for (const auto& [n, fits] : r.batchFind.tried) QCOMPARE(fits, n <= largest);
    QVERIFY2(largest >= 64 && tooLarge > largest && tooLarge - largest <= std::max<int64_t>(1, largest / 16),
             qPrintable(QString("%1 %2").arg(largest).arg(tooLarge)));
    // The micro-batch for the effective batch of 288: its largest divisor that fits.
    QVERIFY(r.batchFind.micro <= largest && 288 % r.batchFind.micro == 0);
    for (int64_t d = r.batchFind.micro + 1; d <= largest; ++d) QVERIFY(288 % d != 0);
    QCOMPARE(r.batchFind.micro * r.batchFind.accumulation, int64_t(288));
    const auto written = summaryOf(r.runDir)["batch_find"];
    QCOMPARE(written["largest_micro_batch"].get<int64_t>(), largest);
    QCOMPARE(written["memory_mib"].get<double>(), 64.0);

    c.memory.oom_backoff = false;
    c.train.accumulation_steps = 1;
    c.train.max_steps = 2;
    for (const int64_t batch : {largest, tooLarge}) {
      c.train.batch_size = static_cast<int>(batch);
      Session t;
      t.start(c);
      const RunSummary run = test::runToEnd(t);
      QCOMPARE(statusName(run.status), std::string(batch == largest ? "completed" : "failed"));
      if (batch != largest) QVERIFY2(run.error.find("out of memory") != std::string::npos, run.error.c_str());
    }
  }

  void batchFindBadInput() {
    QTemporaryDir dir;
    TrainConfig c = runConfig(dir.path());
    BatchFindOptions o;
    o.maxBatch = 1;
    try {
      Session().findBatchSize(c, o);
      QFAIL("expected an error");
    } catch (const InputError& e) {
      QVERIFY2(std::string(e.what()).find("--max must be between 2") != std::string::npos, e.what());
    }
    QVERIFY(QDir(dir.path()).entryList(QDir::Dirs | QDir::NoDotAndDotDot).isEmpty());
    const test::Ran ran = test::cli({"batch-find", "--preset", "fashion-mnist-mlp", "--max", "1", "--out", dir.path()});
    QCOMPARE(ran.code, 2);
    QVERIFY2(ran.output.contains("--max must be between 2"), qPrintable(ran.output));
  }
};

QTEST_GUILESS_MAIN(TestMemoryTechniques)
#include "test_memory_techniques.moc"
