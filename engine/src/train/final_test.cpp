#include "train/final_test.h"

#include <cmath>
#include <filesystem>
#include <optional>

#include "models/model.h"
#include "run/checkpoint.h"
#include "studio/log.h"
#include "studio/run_layout.h"
#include "train/callbacks/train_callback.h"
#include "train/evaluation.h"
#include "train/run_context.h"

namespace studio {
namespace {

// The best checkpoint's step, when the headline is to be its weights: a
// validation split chose it (with none, evaluations measure the test split,
// and weights chosen on it would flatter themselves), one process holds the
// model, and it is of another step than the model's now.
std::optional<int64_t> bestToTest(const RunContext& c) {
  const bool validation = c.data.splits.val && c.data.splits.val->size() > 0;
  const std::string path = c.runDir + "/" + run_files::kBestCheckpoint;
  if (!validation || c.where.ranks || !std::filesystem::exists(path)) return std::nullopt;
  const int64_t step = readCheckpointState(path).position.step;
  if (step == c.position.step) return std::nullopt;
  return step;
}

void setHeadline(RunSummary& s, const EvalFigures& t) {
  s.test.accuracy = t.accuracy;
  s.test.loss = t.loss;
  s.test.r2 = t.r2;
  s.test.rmse = t.rmse;
  s.test.mae = t.mae;
  s.test.map = t.map;
  s.test.f1 = t.f1;
  s.test.map50 = t.map50;
  s.test.map75 = t.map75;
}

// The test figures and loss (a detector has none in evaluation: not said).
std::string figureText(const EvalFigures& t) {
  const std::string loss = std::isnan(t.loss) ? std::string() : ", test loss " + fmt(t.loss);
  if (!std::isnan(t.map50)) return "test mAP " + fmt(t.map) + ", AP50 " + fmt(t.map50) + ", AP75 " + fmt(t.map75);
  return (!std::isnan(t.map)
              ? "test mAP " + fmt(t.map) + ", F1 (macro) " + fmt(t.f1) + ", subset accuracy " + fmt(t.accuracy)
          : std::isnan(t.accuracy) ? "test R\u00b2 " + fmt(t.r2) + ", RMSE " + fmt(t.rmse) + ", MAE " + fmt(t.mae)
                                   : "test accuracy " + fmt(t.accuracy)) +
         loss;
}

}  // namespace

void finalTest(RunContext& c, RunSummary& summary) {
  const bool fresh = c.lastTestEval && c.lastTestEval->first == c.position.step;
  const std::optional<int64_t> best = fresh ? std::nullopt : bestToTest(c);
  EvalFigures test;
  summary.test.weightsStep = c.position.step;
  if (best) {
    // The last weights first (no report: the report is the headline's), then
    // the best checkpoint's, reported; the last weights are put back after,
    // so the model (and any checkpoint written later) stays the last one.
    const EvalFigures last = c.evaluation->figures(false, "evaluating the last weights on the test set");
    summary.test.lastAccuracy = last.accuracy;
    summary.test.lastLoss = last.loss;
    summary.test.lastR2 = last.r2;
    summary.test.lastMap = last.map;
    Model& model = *c.parts.model;
    std::vector<torch::Tensor> kept;
    {
      torch::NoGradGuard noGrad;
      for (const auto& [name, t] : model.namedState()) kept.push_back(t.clone());
    }
    loadModelWeights(c.runDir + "/" + run_files::kBestCheckpoint, model);
    test = c.evaluation->reported(false, "best", *best);
    {
      torch::NoGradGuard noGrad;
      const auto own = model.namedState();
      for (size_t i = 0; i < own.size(); ++i) own[i].second.copy_(kept[i]);
    }
    summary.test.weights = "best";
    summary.test.weightsStep = *best;
    log::info("last weights (step " + std::to_string(c.position.step) + "): " + figureText(last));
  } else {
    test = fresh ? c.lastTestEval->second : c.evaluation->reported(false);
  }
  setHeadline(summary, test);
  c.callbacks->onFinalTest(c, summary);
  summary.seconds.eval = c.times.eval;
  log::info("finished: " + figureText(test) +
            (best ? " (the best checkpoint's weights, step " + std::to_string(*best) + ")" : std::string()) + ", " +
            fmt(summary.samplesPerSecond) + " samples/s, " + fmt(summary.wallSeconds) + " s");
}

}  // namespace studio
