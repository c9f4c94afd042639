#include "train/evaluation.h"

#include <ATen/ops/_upsample_bilinear2d_aa.h>

#include <filesystem>

#include "models/model.h"
#include "studio/figure_words.h"
#include "studio/file_io.h"
#include "studio/image_file.h"
#include "studio/log.h"
#include "studio/metric_catalog.h"
#include "studio/run_layout.h"
#include "train/callbacks/train_callback.h"
#include "train/device_info.h"
#include "train/metric_window.h"
#include "train/rank_agreement.h"
#include "train/tasks/task.h"

namespace studio {
namespace {

// Up to n images side by side, each scaled to fit 64 pixels, as one picture.
Image thumbnailStrip(const torch::Tensor& u8, int64_t& cellH, int64_t& cellW) {
  const int64_t n = u8.size(0), c = u8.size(1), h = u8.size(2), w = u8.size(3);
  const double scale = std::min(1.0, 64.0 / static_cast<double>(std::max(h, w)));
  cellH = std::max<int64_t>(1, std::llround(static_cast<double>(h) * scale));
  cellW = std::max<int64_t>(1, std::llround(static_cast<double>(w) * scale));
  torch::Tensor x = u8.to(torch::kFloat32);
  if (cellH != h || cellW != w) x = at::_upsample_bilinear2d_aa(x, {cellH, cellW}, false, std::nullopt, std::nullopt);
  // [n, C, h, w] -> [h, n * w, C]
  torch::Tensor strip = x.round().clamp(0, 255).to(torch::kUInt8).permute({2, 0, 3, 1}).reshape({cellH, n * cellW, c});
  strip = strip.contiguous();
  Image img;
  img.height = cellH;
  img.width = n * cellW;
  img.channels = c;
  img.pixels.assign(strip.data_ptr<uint8_t>(), strip.data_ptr<uint8_t>() + strip.numel());
  return img;
}

// Clears the phase when an evaluation ends (an error included).
struct PhaseScope {
  RunContext& ctx;
  ~PhaseScope() { ctx.setPhase(""); }
};

}  // namespace

EvalOptions Evaluation::options(const std::string& what) {
  const RunContext& c = m_ctx;
  EvalOptions o;
  o.batchSize = c.cfg.evaluation.batch_size;
  o.autocast = c.where.autocast;
  o.autocastDtype = c.where.autocastDtype;
  o.channelsLast = c.cfg.performance.channels_last;
  o.classes = c.data.splits.numClasses();
  o.targetNames = c.data.splits.targetNames;
  o.targetMean = c.data.splits.targetMean;
  o.targetStd = c.data.splits.targetStd;
  o.thresholds =
      c.thresholds.empty() ? std::vector<double>(c.data.splits.targetNames.size(), c.cfg.task.threshold) : c.thresholds;
  o.group = c.where.ranks;
  o.progress = [this, what](int64_t done, int64_t total) { m_ctx.setPhase(what, done, total); };
  return o;
}

Figures Evaluation::reported(bool validation, const std::string& weights, int64_t weightsStep) {
  RunContext& c = m_ctx;
  const Dataset& set = validation ? *c.data.val : *c.data.test;
  const ExampleSet& hostSet = validation ? *c.data.splits.val : *c.data.splits.test;
  Timed timed{c.times.eval};
  ActivityScope busy(c, RunActivity::Evaluating);
  CudnnHeuristicsOnly heuristics;
  syncBatchNormStatistics(c);
  PhaseScope phase{c};
  EvalOptions eo = options(validation ? "evaluating on the validation set" : "evaluating on the test set");
  eo.tuneThresholds = validation && c.cfg.task.tune_thresholds;
  const EvalOutcome o = c.parts.task->evaluate(*c.parts.model, set, c.data.loaderOptions, eo, c.where.device);
  if (eo.tuneThresholds) keepThresholds(o);
  if (!c.where.writer) return c.parts.task->figures(o);
  EvalReport r = c.parts.task->report(o, {c.position.step, c.position.epoch, validation, c.data.splits, c.data.plan});
  r.weights = weights;
  r.weightsStep = weightsStep;
  const std::string folder = c.runDir + "/" + run_files::kEvalFolder;
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  requireRealDirectory(folder);
  if (c.data.splits.kind == DataKind::Image && !r.wrong.empty()) {
    std::vector<int64_t> idx;
    for (const auto& w : r.wrong) idx.push_back(w.index);
    const torch::Tensor images = hostSet.gather(torch::tensor(idx, torch::kInt64)).x;
    writePngFile(c.runDir + "/" + run_files::evalThumbnails(r.step),
                 thumbnailStrip(images, r.thumbnailHeight, r.thumbnailWidth));
    r.thumbnails = std::filesystem::path(run_files::evalThumbnails(r.step)).filename().string();
  }
  writeFileAtomically(c.runDir + "/" + run_files::evalReport(r.step), toJson(r).dump() + "\n");
  return c.parts.task->figures(o);
}

void Evaluation::keepThresholds(const EvalOutcome& o) {
  RunContext& c = m_ctx;
  c.thresholds.clear();
  nlohmann::json labels = nlohmann::json::object();
  for (const auto& l : o.labels) {
    c.thresholds.push_back(l.threshold);
    labels[l.name] = l.threshold;
  }
  if (c.where.writer)
    writeFileAtomically(c.runDir + "/" + run_files::kThresholds,
                        nlohmann::json{{"step", c.position.step}, {"thresholds", labels}}.dump(1) + "\n");
}

Figures Evaluation::figures(bool validation, const std::string& what) {
  RunContext& c = m_ctx;
  Timed timed{c.times.eval};
  CudnnHeuristicsOnly heuristics;
  PhaseScope phase{c};
  const EvalOutcome o = c.parts.task->evaluate(*c.parts.model, validation ? *c.data.val : *c.data.test,
                                               c.data.loaderOptions, options(what), c.where.device);
  return c.parts.task->figures(o);
}

void Evaluation::atStep() {
  RunContext& c = m_ctx;
  c.window->flush();
  if (c.control.weightsSuspect()) return;  // no evaluation of weights about to be dropped
  const bool haveVal = c.data.val->size() > 0;
  const Figures e = reported(haveVal);
  if (!haveVal) c.lastTestEval = {c.position.step, e};
  MetricRecord r = c.record(RecordKind::Eval);
  // Each figure the record has a column for (the ema_ ones are the weight average's).
  for (const std::string& id : evalFigures()) r.*findMetric(id)->real = e[id];
  c.callbacks->onEvaluation(c, haveVal, r);
  c.post(r);
  c.lastEvalLoss = e["eval_loss"];
  // A detector gives no loss in evaluation (NaN): none is said.
  log::info("step " + std::to_string(c.position.step) + " " + (haveVal ? "validation: " : "test: ") +
            taskFigureWords(c.cfg.task.kind.value(), e));
  EvalVerdict verdict{e, haveVal, std::nullopt};
  c.callbacks->onEvaluated(c, verdict);
  c.callbacks->afterEvaluation(c, verdict);
  c.window->restart();  // evaluation time is not training time
}

}  // namespace studio
