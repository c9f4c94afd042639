#pragma once
// What the Predict tab's pages share (predict_panel.cpp, box_predict_view.cpp,
// mask_predict_view.cpp): the run's Predictor, kept loaded between jobs and
// used by one job at a time, and several inputs' reports made one.
// Thread: get() under the mutex, on a job's thread; appendReport any thread.

#include <memory>
#include <mutex>
#include <string>

#include "studio/predict.h"

namespace studio::ui {

struct HeldPredictor {
  std::mutex mutex;
  std::unique_ptr<Predictor> predictor;
  std::string key;  // folder, weights and TTA it was loaded for
  // The folder's Predictor with these options, loaded again when they
  // changed or `reload` (a paused run's new checkpoint).
  Predictor& get(const std::string& folder, const PredictOptions& options, bool reload = false);
};

// Several inputs' reports as one: every per-row vector (rows, probabilities,
// features, values, masks) follows its rows, the counts and the confusion
// matrix are summed.
void appendReport(PredictionReport& into, PredictionReport&& more);

}  // namespace studio::ui
