// Data parallelism on the CPU with Gloo, in real processes: the CLI under
// PyTorch's own launcher (python -m torch.distributed.run, torchrun) and
// under hand-set torchrun variables.
//  - 2 processes with a batch of 50 each end with the same weights (within
//    float tolerance: the sums are ordered differently) and the same loss
//    curve as 1 process with a batch of 100, with accumulation and a short
//    last batch split between the ranks;
//  - rank 0 alone writes the one run folder;
//  - a rank that dies makes the other stop at once with a message naming the
//    exchange, not hang; resuming with the same world size then ends with
//    the weights of the uninterrupted run; resuming with another is refused;
//  - synchronised BatchNorm (distributed.batchnorm sync): its forward and
//    backward equal torch::nn::BatchNorm2d's in a group of one; with 2
//    processes a CNN stays far closer to 1 process with the global batch
//    than with local BatchNorm (each rank's own statistics), also when a
//    rank's share of the last batch is empty;
//  - wrong torchrun variables and a port in use: exit 2, a message naming
//    the variable or the port, no run folder.
#include <QtTest/QtTest>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dist/process_group.h"
#include "nets/batch_norm.h"
#include "test_support.h"
#include "torch_test_support.h"

using namespace studio;

namespace {

const QStringList kSettings = {
    "--preset", "fashion-mnist-mlp",          "--set", "model.dropout=0",          "--set", "model.width=64",
    "--set",    "data.train_limit=2030",      "--set", "data.test_limit=300",      "--set", "train.epochs=2",
    "--set",    "train.accumulation_steps=2", "--set", "train.log_every_steps=1",  "--set", "optimizer.kind=sgd",
    "--set",    "optimizer.momentum=0.9",     "--set", "optimizer.lr=0.05",        "--set", "schedule.kind=cosine",
    "--set",    "schedule.warmup_steps=0",    "--set", "evaluation.every_steps=5", "--set", "performance.device=cpu",
    "--set",    "performance.threads=1",      "--set", "distributed.timeout_s=60"};

QStringList settings(const QString& outDir, int batch) {
  return kSettings +
         QStringList{"--set", "train.batch_size=" + QString::number(batch), "--set", "output.dir=" + outDir};
}

// The CLI in `n` processes under PyTorch's launcher (a free port of its own).
test::Ran torchrun(int n, const QStringList& args) {
  return test::runProgram(test::env("STUDIO_PYTHON"),
                          QStringList{"-m", "torch.distributed.run", "--standalone", "--nproc-per-node",
                                      QString::number(n), "--no-python", test::env("STUDIO_CLI")} +
                              args);
}

int freePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    qFatal("no free port");
  ::close(fd);
  return ntohs(a.sin_port);
}

// One CLI process with torchrun's variables set by hand.
struct RankProcess {
  QProcess p;
  RankProcess(int rank, int world, int port, const QStringList& args, const QStringList& extraEnv = {}) {
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("RANK", QString::number(rank));
    env.insert("LOCAL_RANK", QString::number(rank));
    env.insert("WORLD_SIZE", QString::number(world));
    env.insert("MASTER_ADDR", "127.0.0.1");
    env.insert("MASTER_PORT", QString::number(port));
    for (const auto& kv : extraEnv) env.insert(kv.section('=', 0, 0), kv.section('=', 1));
    p.setProcessEnvironment(env);
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(test::env("STUDIO_CLI"), args);
  }
  test::Ran finish() {
    if (!p.waitForFinished(test::kHangLimitMs)) qFatal("a rank did not finish");
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromUtf8(p.readAll())};
  }
};

QStringList runFolders(const QString& outDir) { return QDir(outDir).entryList(QDir::Dirs | QDir::NoDotAndDotDot); }

std::string onlyRun(const QString& outDir) {
  const QStringList runs = runFolders(outDir);
  if (runs.size() != 1) qFatal("%s holds %lld run folders", qPrintable(outDir), static_cast<long long>(runs.size()));
  return (outDir + "/" + runs.front()).toStdString();
}

// Largest |a - b| over all parameters and buffers, and the largest |b|.
std::pair<double, double> weightDifference(const std::string& runA, const std::string& runB) {
  auto a = test::weightsOf(runA), b = test::weightsOf(runB);
  const auto sa = test::stateOf(*a), sb = test::stateOf(*b);
  if (sa.size() != sb.size()) qFatal("different models");
  double diff = 0, scale = 0;
  for (const auto& [name, t] : sa) {
    diff = std::max(diff, (t - sb.at(name)).abs().max().item<double>());
    scale = std::max(scale, sb.at(name).abs().max().item<double>());
  }
  return {diff, scale};
}

}  // namespace

class TestDistributed : public QObject {
  Q_OBJECT
  QTemporaryDir m_tmp;
  std::string m_oneProcess, m_twoProcesses;

 private Q_SLOTS:
  void twoProcessesTrainAsOneWithTheGlobalBatch() {
    const QString one = m_tmp.path() + "/one", two = m_tmp.path() + "/two";
    const test::Ran single = test::cli(QStringList{"train"} + settings(one, 100));
    QVERIFY2(single.code == 0, qPrintable(single.output));
    const test::Ran ran = torchrun(2, QStringList{"train"} + settings(two, 50));
    QVERIFY2(ran.code == 0, qPrintable(ran.output));
    QVERIFY2(ran.output.contains("rank 1 of 2: completed"), qPrintable(ran.output));
    m_oneProcess = onlyRun(one);
    m_twoProcesses = onlyRun(two);  // rank 1 made no folder of its own

    // 2030 examples in global batches of 100: 21 per epoch (the last of
    // 30, 15 per rank), 11 steps of 2 accumulated per epoch.
    const auto rowsOne = test::metricRows(m_oneProcess, RecordKind::Train);
    const auto rowsTwo = test::metricRows(m_twoProcesses, RecordKind::Train);
    QCOMPARE(rowsTwo.size(), size_t(22));
    QCOMPARE(rowsTwo.size(), rowsOne.size());
    for (size_t i = 0; i < rowsOne.size(); ++i) {
      QCOMPARE(rowsTwo[i].step, rowsOne[i].step);
      QVERIFY2(test::close(rowsTwo[i].trainLoss, rowsOne[i].trainLoss, 1e-5, 1e-6),
               qPrintable(QString("step %1: loss %2 with 2 processes, %3 with 1")
                              .arg(rowsOne[i].step)
                              .arg(rowsTwo[i].trainLoss, 0, 'g', 9)
                              .arg(rowsOne[i].trainLoss, 0, 'g', 9)));
      QVERIFY(test::close(rowsTwo[i].lr, rowsOne[i].lr, 1e-12, 0));
    }
    // Evaluation is sharded and summed: the same figures.
    const auto evalOne = test::metricRows(m_oneProcess, RecordKind::Eval);
    const auto evalTwo = test::metricRows(m_twoProcesses, RecordKind::Eval);
    QCOMPARE(evalTwo.size(), evalOne.size());
    for (size_t i = 0; i < evalOne.size(); ++i) {
      QVERIFY(test::close(evalTwo[i].evalLoss, evalOne[i].evalLoss, 1e-5, 1e-6));
      QVERIFY(std::fabs(evalTwo[i].evalAccuracy - evalOne[i].evalAccuracy) <= 1.0 / 300 + 1e-12);
    }
    const auto [diff, scale] = weightDifference(m_twoProcesses, m_oneProcess);
    QVERIFY2(diff <= 1e-5 * std::max(1.0, scale),
             qPrintable(QString("weights differ by %1 (largest weight %2)").arg(diff).arg(scale)));
    QCOMPARE(test::runInfo(m_twoProcesses)[run_files::run_info::kWorldSize].get<int>(), 2);
    const auto summary = nlohmann::json::parse(test::readText(m_twoProcesses + "/summary.json"));
    QCOMPARE(summary["world_size"].get<int>(), 2);
    QCOMPARE(summary["status"].get<std::string>(), std::string("completed"));
  }

  void aDeadRankStopsTheOtherAndTheRunResumes() {
    QVERIFY(!m_twoProcesses.empty());
    const QString out = m_tmp.path() + "/dead";
    const int port = freePort();
    const QStringList args = QStringList{"train"} + settings(out, 50);
    RankProcess rank0(0, 2, port, args);
    RankProcess rank1(1, 2, port, args, {"STUDIO_CRASH_AT=train-step:13"});  // killed after step 13
    const test::Ran dead = rank1.finish();
    const test::Ran survivor = rank0.finish();
    QCOMPARE(dead.code, -1);
    QVERIFY2(survivor.code == 1, qPrintable(survivor.output));
    QVERIFY2(survivor.output.contains("rank 0 of 2:") && survivor.output.contains("another rank has stopped") &&
                 survivor.output.contains("resume it with torchrun --nproc-per-node 2"),
             qPrintable(survivor.output));
    const std::string run = onlyRun(out);
    const auto summary = nlohmann::json::parse(test::readText(run + "/summary.json"));
    QCOMPARE(summary["status"].get<std::string>(), std::string("failed"));
    QVERIFY(summary["steps"].get<int>() >= 13);

    // One process cannot take over a two-process checkpoint.
    const test::Ran alone = test::cli({"resume", QString::fromStdString(run)});
    QCOMPARE(alone.code, 2);
    QVERIFY2(alone.output.contains("was made by 2 process(es) and this run has 1"), qPrintable(alone.output));

    const test::Ran resumed = torchrun(2, {"resume", QString::fromStdString(run)});
    QVERIFY2(resumed.code == 0, qPrintable(resumed.output));
    // From the evaluation checkpoint at step 10 to the end: the weights of
    // the run that was never interrupted.
    const auto [diff, scale] = weightDifference(run, m_twoProcesses);
    QVERIFY2(diff <= 1e-6 * std::max(1.0, scale), qPrintable(QString("weights differ by %1").arg(diff)));
    QCOMPARE(test::metricRows(run, RecordKind::Train).size(), size_t(22));
  }

  void synchronisedBatchNormIsBatchNorm() {
    RankEnvironment env;
    env.masterAddr = "127.0.0.1";
    env.masterPort = freePort();
    ProcessGroup group(env, std::chrono::seconds(30));  // rank 0 of 1
    torch::manual_seed(3);
    BatchNorm2d synced(4);
    torch::nn::BatchNorm2d plain(4);
    {
      torch::NoGradGuard noGrad;
      synced->weight.uniform_(0.5, 1.5);
      synced->bias.uniform_(-0.5, 0.5);
      synced->running_mean.uniform_(-1, 1);  // the shift of the sums
      plain->weight.copy_(synced->weight);
      plain->bias.copy_(synced->bias);
      plain->running_mean.copy_(synced->running_mean);
    }
    synced->synchronise(&group);
    const torch::Tensor x = torch::randn({6, 4, 5, 5}) * 3 + 2;
    const torch::Tensor r = torch::randn({6, 4, 5, 5});
    torch::Tensor xs = x.clone().requires_grad_(true), xp = x.clone().requires_grad_(true);
    torch::Tensor ys = synced->forward(xs), yp = plain->forward(xp);
    (ys * r).sum().backward();
    (yp * r).sum().backward();
    auto same = [](const torch::Tensor& a, const torch::Tensor& b, const char* what) {
      const double d = (a - b).abs().max().item<double>();
      QVERIFY2(d <= 1e-5 * std::max(1.0, b.abs().max().item<double>()),
               qPrintable(QString("%1 differs by %2").arg(what).arg(d)));
    };
    same(ys, yp, "output");
    same(xs.grad(), xp.grad(), "input gradient");
    same(synced->weight.grad(), plain->weight.grad(), "weight gradient");
    same(synced->bias.grad(), plain->bias.grad(), "bias gradient");
    same(synced->running_mean, plain->running_mean, "running mean");
    same(synced->running_var, plain->running_var, "running variance");
    QCOMPARE(synced->num_batches_tracked.item<int64_t>(), int64_t(1));
  }

  void synchronisedBatchNormTrainsAsOneProcess() {
    // A CNN with BatchNorm in global batches of 100 from 1001 examples: step
    // 11 is the epoch's last batch, of 1 example, and rank 1's share of it
    // is empty.
    auto run = [&](const QString& out, int processes, const QString& batchnorm, int steps) {
      const QStringList args = {"train",
                                "--preset",
                                "fashion-mnist-cnn",
                                "--set",
                                "model.width=4",
                                "--set",
                                "model.depth=2",
                                "--set",
                                "model.dropout=0",
                                "--set",
                                "data.augment_flip=false",
                                "--set",
                                "data.augment_crop=0",
                                "--set",
                                "data.train_limit=1001",
                                "--set",
                                "data.test_limit=200",
                                "--set",
                                "train.max_steps=" + QString::number(steps),
                                "--set",
                                "optimizer.kind=sgd",
                                "--set",
                                "optimizer.lr=0.01",
                                "--set",
                                "schedule.kind=constant",
                                "--set",
                                "performance.device=cpu",
                                "--set",
                                "performance.threads=1",
                                "--set",
                                "distributed.batchnorm=" + batchnorm,
                                "--set",
                                "train.batch_size=" + QString::number(100 / processes),
                                "--set",
                                "output.dir=" + out};
      const test::Ran ran = processes == 1 ? test::cli(args) : torchrun(processes, args);
      if (ran.code != 0) qFatal("%s", qPrintable(ran.output));
      return onlyRun(out);
    };
    // Two steps: the weights agree to float rounding (the sums over the
    // ranks and the BatchNorm backward pass are ordered differently).
    {
      const std::string one = run(m_tmp.path() + "/bn1-2", 1, "local", 2);
      const std::string synced = run(m_tmp.path() + "/bn-sync-2", 2, "sync", 2);
      const auto [diff, scale] = weightDifference(synced, one);
      QVERIFY2(diff <= 1e-4 * std::max(1.0, scale), qPrintable(QString("sync differs by %1").arg(diff)));
    }
    // Twelve steps, through the empty share: rounding grows with training,
    // yet stays far below the difference local statistics make.
    const std::string one = run(m_tmp.path() + "/bn1", 1, "local", 12);
    const std::string synced = run(m_tmp.path() + "/bn-sync", 2, "sync", 12);
    const std::string local = run(m_tmp.path() + "/bn-local", 2, "local", 12);
    const double syncDiff = weightDifference(synced, one).first;
    const double localDiff = weightDifference(local, one).first;
    QVERIFY2(syncDiff * 5 < localDiff,
             qPrintable(QString("sync differs by %1, local by %2").arg(syncDiff).arg(localDiff)));
    QCOMPARE(test::metricRows(synced, RecordKind::Train).size(), size_t(12));
  }

  void wrongVariablesAreRefusedBeforeAnythingIsWritten_data() {
    QTest::addColumn<QStringList>("variables");
    QTest::addColumn<QString>("message");
    QTest::newRow("world 0") << QStringList{"WORLD_SIZE=0", "RANK=0"} << "WORLD_SIZE=0 must be a whole number";
    QTest::newRow("rank >= world") << QStringList{"WORLD_SIZE=2", "RANK=2"} << "RANK=2 must be a rank between 0 and";
    QTest::newRow("no rank") << QStringList{"WORLD_SIZE=2"} << "WORLD_SIZE is set but RANK is not";
    QTest::newRow("bad port") << QStringList{"WORLD_SIZE=2", "RANK=0", "MASTER_ADDR=127.0.0.1", "MASTER_PORT=70000"}
                              << "MASTER_PORT=70000 must be a TCP port";
  }
  void wrongVariablesAreRefusedBeforeAnythingIsWritten() {
    QFETCH(QStringList, variables);
    QFETCH(QString, message);
    const QString out = m_tmp.path() + "/bad-" + QString(QTest::currentDataTag()).replace(' ', '-');
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (const char* v : {"WORLD_SIZE", "RANK", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"}) env.remove(v);
    for (const auto& kv : variables) env.insert(kv.section('=', 0, 0), kv.section('=', 1));
    p.setProcessEnvironment(env);
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(test::env("STUDIO_CLI"), QStringList{"train"} + settings(out, 50));
    QVERIFY(p.waitForFinished(test::kHangLimitMs));
    const QString output = QString::fromUtf8(p.readAll());
    QCOMPARE(p.exitCode(), 2);
    QVERIFY2(output.contains(message), qPrintable(output));
    QVERIFY(runFolders(out).isEmpty());
  }

  void aPortInUseIsNamed() {
    // Something else listens on the port rank 0 is told to host the rendezvous on.
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    QVERIFY(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 && ::listen(fd, 1) == 0 &&
            ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0);
    const int port = ntohs(a.sin_port);
    const QString out = m_tmp.path() + "/port";
    RankProcess rank0(0, 2, port, QStringList{"train"} + settings(out, 50));
    const test::Ran ran = rank0.finish();
    ::close(fd);
    QCOMPARE(ran.code, 2);
    QVERIFY2(ran.output.contains("127.0.0.1:" + QString::number(port)) && ran.output.contains("port may be in use"),
             qPrintable(ran.output));
    QVERIFY(runFolders(out).isEmpty());
  }
};

QTEST_GUILESS_MAIN(TestDistributed)
#include "test_distributed.moc"
