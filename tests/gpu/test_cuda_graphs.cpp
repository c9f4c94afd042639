// performance.cuda_graphs on a CUDA GPU: the whole step recorded once and
// replayed trains exactly as the eager step does. The eager engine is the
// reference: each pair of runs below has the same seed, data and settings,
// and the recorded run's losses, gradient norms, skipped steps and final
// accuracy must equal the eager run's within float tolerance over 60 steps.
// The cases cover fp32 SGD with OneCycle's cycling momentum (the update
// with a device momentum: three passes of the fused SGD kernel), fp16 AdamW with loss-scale overflows
// (skipped inside the graph), accumulation, clipping and a short last group
// of each epoch (eager between replays), and bf16 with the workers loader.
// Auto falls back with its reason (Adam with a cycling beta1), and on makes
// that an error. Plain C++ (no Qt), so it also builds on GPU machines without
// Qt; without CUDA it says so and ctest counts it skipped (exit 77).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <torch/cuda.h>

#include "optim/optimizer.h"
#include "studio/log.h"
#include "studio/metric_record.h"
#include "studio/session.h"

using namespace studio;

namespace {

int failures = 0;

void check(bool ok, const std::string& what) {
  std::printf("%s %s\n", ok ? "  ok  " : "  FAIL", what.c_str());
  if (!ok) ++failures;
}

std::string tempDir() {
  char tmpl[] = "/tmp/studio-cuda-graphs-XXXXXX";
  const char* d = mkdtemp(tmpl);
  if (!d) std::abort();
  return d;
}

std::vector<MetricRecord> trainRows(const std::string& runDir) {
  std::vector<MetricRecord> rows;
  std::ifstream in(runDir + "/metrics.csv");
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    MetricRecord r;
    if (parseMetricsCsvRow(line, r) && r.kind == RecordKind::Train) rows.push_back(r);
  }
  return rows;
}

RunSummary runToEnd(const TrainConfig& c) {
  Session s;
  s.start(c);
  for (;;) {
    const bool done = s.wait(std::chrono::milliseconds(20));
    MetricRecord r;
    while (s.pollMetric(r)) {
    }
    if (done) return s.summary();
  }
}

TrainConfig base(const std::string& out) {
  TrainConfig c = loadConfigFile(presetPath(defaultPresetDir(), "fashion-mnist-cnn"));
  c.data.train_limit = 1000;  // 7 full batches of 128 and one of 104 per epoch
  c.data.test_limit = 1000;
  c.train.epochs = 0;  // the steps alone decide
  c.train.max_steps = 60;
  c.train.log_every_steps = 1;
  c.evaluation.every_steps = 25;
  c.performance.device = "cuda";
  // Reproducible kernels: no autotuning, no TF32 (the comparison is of the
  // step's arithmetic, not of cuDNN's choice of algorithm).
  c.performance.cudnn_benchmark = false;
  c.performance.tf32 = false;
  c.output.dir = out;
  return c;
}

bool close(double a, double b, double rtol, double atol) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (std::isinf(a) || std::isinf(b)) return a == b;
  return std::fabs(a - b) <= atol + rtol * std::fabs(b);
}

// firstRtol: the losses of the first 10 steps (before training can grow a
// difference); rtol: those after, step by step, or with `chaotic` the mean
// loss of the last 20 steps (fp32, below: the two runs' paths part, the
// place they reach must not). Gradient norms get 10 times as much (a norm
// moves more than the mean loss when a ReLU or max-pool flips). The learning
// rates and the skipped steps are equal at every step in every case.
void compareRuns(const std::string& name, const std::string& out, const std::vector<std::string>& overrides,
                 double rtol, double firstRtol, bool chaotic = false) {
  std::printf("%s\n", name.c_str());
  TrainConfig c = base(out);
  for (const auto& o : overrides) applyOverride(c, o);
  TrainConfig eager = c, graphed = c;
  eager.performance.cuda_graphs = CudaGraphs::off;
  graphed.performance.cuda_graphs = CudaGraphs::on;
  const RunSummary e = runToEnd(eager), g = runToEnd(graphed);
  check(e.status == RunStatus::completed, "eager run completed (" + statusName(e.status) + " " + e.error + ")");
  check(g.status == RunStatus::completed, "graph run completed (" + statusName(g.status) + " " + g.error + ")");
  check(g.stepper.cudaGraphs.rfind("on (recorded at step ", 0) == 0, "graph run recorded: " + g.stepper.cudaGraphs);
  const auto er = trainRows(e.runDir), gr = trainRows(g.runDir);
  check(er.size() == 60 && gr.size() == 60, "60 training rows each");
  double worst = 0, worstNorm = 0;
  bool same = er.size() == gr.size();
  for (size_t i = 0; same && i < er.size(); ++i) {
    const double r = i < 10 ? firstRtol : rtol;
    const bool stepwise = i < 10 || !chaotic;
    same = (!stepwise || (close(gr[i].trainLoss, er[i].trainLoss, r, 1e-6) &&
                          close(gr[i].gradNorm, er[i].gradNorm, 10 * r, 1e-5))) &&
           gr[i].skippedSteps == er[i].skippedSteps && close(gr[i].lr, er[i].lr, 1e-12, 0);
    if (std::isfinite(er[i].trainLoss))
      worst =
          std::max(worst, std::fabs(gr[i].trainLoss - er[i].trainLoss) / std::max(1e-6, std::fabs(er[i].trainLoss)));
    if (std::isfinite(er[i].gradNorm))
      worstNorm =
          std::max(worstNorm, std::fabs(gr[i].gradNorm - er[i].gradNorm) / std::max(1e-6, std::fabs(er[i].gradNorm)));
    if (!same)
      std::printf("        step %lld: loss %.8g vs %.8g, grad norm %.8g vs %.8g, skipped %lld vs %lld\n",
                  static_cast<long long>(er[i].step), gr[i].trainLoss, er[i].trainLoss, gr[i].gradNorm, er[i].gradNorm,
                  static_cast<long long>(gr[i].skippedSteps), static_cast<long long>(er[i].skippedSteps));
  }
  char buf[260];
  if (chaotic) {
    double me = 0, mg = 0;
    for (size_t i = er.size() - std::min<size_t>(20, er.size()); i < er.size() && i < gr.size(); ++i) {
      me += er[i].trainLoss;
      mg += gr[i].trainLoss;
    }
    std::snprintf(buf, sizeof buf,
                  "losses and gradient norms equal over the first 10 steps to %.0e, learning rates and skipped steps "
                  "at all 60; the last 20 steps' mean loss %.5f graph, %.5f eager, to %.0e (largest relative "
                  "difference of a step: loss %.2e, gradient norm %.2e)",
                  firstRtol, mg / 20, me / 20, rtol, worst, worstNorm);
    same = same && close(mg, me, rtol, 0);
  } else {
    std::snprintf(
        buf, sizeof buf,
        "losses, gradient norms and skipped steps equal over 60 steps, to %.0e (the first 10 to %.0e; largest "
        "relative difference: loss %.2e, gradient norm %.2e)",
        rtol, firstRtol, worst, worstNorm);
  }
  check(same, buf);
  std::snprintf(buf, sizeof buf, "test accuracy equal: %.4f graph, %.4f eager", g.test.figures["eval_accuracy"],
                e.test.figures["eval_accuracy"]);
  check(std::fabs(g.test.figures["eval_accuracy"] - e.test.figures["eval_accuracy"]) <= 0.02, buf);
  if (!er.empty()) {
    std::snprintf(buf, sizeof buf, "skipped steps: %lld in both", static_cast<long long>(er.back().skippedSteps));
    check(gr.empty() || gr.back().skippedSteps == er.back().skippedSteps, buf);
  }
}

// The capturable SGD update with a device momentum equals the fused kernel
// with the same momentum as a number, including a skipped step whose
// gradients are NaN (test_optimizer checks the same on the CPU).
void deviceMomentumSgdEqualsFused() {
  std::printf("SGD with a device momentum equals fused SGD\n");
  torch::manual_seed(3);
  const auto opts = torch::TensorOptions().dtype(torch::kFloat32).device(torch::kCUDA);
  std::vector<torch::Tensor> a, b;
  for (auto shape : {std::vector<int64_t>{32, 1, 3, 3}, std::vector<int64_t>{32}, std::vector<int64_t>{10, 512}}) {
    a.push_back(torch::randn(shape, opts).requires_grad_());
    b.push_back(a.back().detach().clone().requires_grad_());
  }
  for (bool nesterov : {true, false}) {
    OptimizerConfig oc;
    oc.kind = OptimizerKind::sgd;
    oc.momentum = 0.9;
    oc.nesterov = nesterov;
    oc.weight_decay = 5e-4;
    Optimizer fused(a, oc), graphable(b, oc);
    torch::Tensor lrT = torch::zeros({}, opts), momT = torch::zeros({}, opts), inf = torch::zeros({}, opts);
    double worst = 0;
    for (int step = 0; step < 50; ++step) {
      const double lr = 0.01 + 0.001 * step, mom = 0.95 - 0.002 * step;
      const bool bad = step == 10;
      for (size_t i = 0; i < a.size(); ++i) {
        torch::Tensor g = torch::randn(a[i].sizes(), opts);
        if (bad) g.view(-1)[0] = std::nan("");
        a[i].mutable_grad() = g.clone();
        b[i].mutable_grad() = g.clone();
      }
      inf.fill_(bad ? 1.0 : 0.0);
      lrT.fill_(lr);
      momT.fill_(mom);
      fused.step(lr, mom, inf);
      graphable.step(lrT, momT, inf);
      for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, (a[i] - b[i]).abs().max().item<double>());
    }
    bool finite = true;
    for (const auto& p : b) finite = finite && p.isfinite().all().item<bool>();
    char buf[128];
    std::snprintf(buf, sizeof buf, "%s: largest difference after 50 steps %.2e, all finite after the NaN step",
                  nesterov ? "nesterov" : "heavy ball", worst);
    check(worst < 1e-5 && finite, buf);
  }
}

}  // namespace

int main() {
  if (!torch::cuda::is_available()) {
    std::printf(
        "skipped: no CUDA GPU here; the CUDA-graph suite runs where one is (it ran on the device tool's H100)\n");
    return 77;
  }
  log::setConsoleLevel("warn");
  const std::string out = tempDir();
  deviceMomentumSgdEqualsFused();
  // fp32: inside a capture cuDNN may pick another convolution algorithm
  // (it chooses by the workspace it can get, and capture allocates from the
  // graph's own pool), which sums in another order: about 1e-5 relative in
  // the first recorded step's loss, which training then grows, chaotically,
  // to 1e-4..5e-3 by step 60 (seen on an H100, 2026-11-23), and once to
  // 2.5e-2 by step 17 (H100, 2026-11-27: a chaotic path, not a wrong step).
  // With a cycling momentum the graph's SGD also rounds differently from the
  // fused kernel (the first check). So: 1e-3 for the first 10 steps, where
  // a wrong recorded step shows at once, then the last 20 steps' mean loss
  // within 5 % and the test accuracy within 2 points.
  compareRuns("fp32 SGD Nesterov, OneCycle without momentum cycling", out,
              {"schedule.onecycle.cycle_momentum=false", "schedule.onecycle.max_lr=0.02", "optimizer.lr=0.02"}, 5e-2,
              1e-3, true);
  // Both at a peak learning rate of 0.02: the preset's 0.1 diverges on these
  // 1000 examples (loss 15 by step 10), where any rounding grows unbounded
  // and the comparison says nothing (one H100 run failed so).
  compareRuns("fp32 SGD Nesterov, OneCycle with cycling momentum", out,
              {"schedule.onecycle.max_lr=0.02", "optimizer.lr=0.02"}, 5e-2, 1e-3, true);
  // fp16 and bf16: equal to 1e-5 throughout (the H100 gave bit-identical
  // figures: the same kernels run eagerly and recorded).
  compareRuns("fp16 AdamW, loss-scale overflows, accumulation 2, clipping, cosine, channels-last", out,
              {"precision.mode=\"fp16\"", "precision.loss_scale.init_scale=1099511627776", "optimizer.kind=\"adamw\"",
               "optimizer.lr=0.002", "schedule.kind=\"cosine\"", "train.accumulation_steps=2",
               "train.grad_clip_norm=1.0", "performance.channels_last=true"},
              1e-5, 1e-5);
  compareRuns("bf16 SGD, constant momentum, step schedule, workers loader, batch 100", out,
              {"precision.mode=\"bf16\"", "schedule.kind=\"step\"", "train.batch_size=100", "loader.mode=\"workers\"",
               "model.kind=\"resnet\"", "model.depth=2"},
              1e-5, 1e-5);

  std::printf("auto falls back with its reason; on makes it an error\n");
  {
    TrainConfig c = base(out);
    c.train.max_steps = 8;
    applyOverride(c, "optimizer.kind=\"adam\"");
    applyOverride(c, "optimizer.lr=0.001");
    const RunSummary a = runToEnd(c);
    check(a.status == RunStatus::completed && a.stepper.cudaGraphs.find("cycles adam's beta1") != std::string::npos,
          "auto with Adam and OneCycle's beta1: " + a.stepper.cudaGraphs);
    c.performance.cuda_graphs = CudaGraphs::on;
    const RunSummary o = runToEnd(c);
    check(o.status == RunStatus::failed && o.badInput &&
              o.error.find("performance.cuda_graphs is on") != std::string::npos,
          "on with Adam and OneCycle's beta1 fails as bad input: " + o.error);
  }
  std::printf("%s\n", failures == 0 ? "all passed" : (std::to_string(failures) + " failed").c_str());
  return failures == 0 ? 0 : 1;
}
