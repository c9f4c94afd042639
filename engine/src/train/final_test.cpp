#include "train/final_test.h"

#include <cmath>
#include <filesystem>
#include <optional>

#include "models/model.h"
#include "run/checkpoint.h"
#include "studio/figure_words.h"
#include "studio/log.h"
#include "studio/metric_catalog.h"
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

// The task's test figures (summary.json's), as the evaluation gave them.
Figures headline(const Figures& t, TaskKind task) {
  Figures f;
  for (const auto& id : taskTestFigures(task)) f.set(id, t[id]);
  return f;
}

// The test figures in words (a detector has no loss in evaluation: not said).
std::string figureText(const Figures& t, TaskKind task) { return "test " + taskFigureWords(task, t); }

}  // namespace

void finalTest(RunContext& c, RunSummary& summary) {
  const bool fresh = c.lastTestEval && c.lastTestEval->first == c.position.step;
  const std::optional<int64_t> best = fresh ? std::nullopt : bestToTest(c);
  Figures test;
  summary.test.weightsStep = c.position.step;
  if (best) {
    // The last weights first (no report: the report is the headline's), then
    // the best checkpoint's, reported; the last weights are put back after,
    // so the model (and any checkpoint written later) stays the last one.
    const Figures last = c.evaluation->figures(false, "evaluating the last weights on the test set");
    summary.test.last = headline(last, c.cfg.task.kind.value());
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
    log::info("last weights (step " + std::to_string(c.position.step) +
              "): " + figureText(last, c.cfg.task.kind.value()));
  } else {
    test = fresh ? c.lastTestEval->second : c.evaluation->reported(false);
  }
  summary.test.figures = headline(test, c.cfg.task.kind.value());
  c.callbacks->onFinalTest(c, summary);
  summary.seconds.eval = c.times.eval;
  log::info("finished: " + figureText(test, c.cfg.task.kind.value()) +
            (best ? " (the best checkpoint's weights, step " + std::to_string(*best) + ")" : std::string()) + ", " +
            fmt(summary.samplesPerSecond) + " samples/s, " + fmt(summary.wallSeconds) + " s");
}

}  // namespace studio
