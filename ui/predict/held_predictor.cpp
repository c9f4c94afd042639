#include "ui/predict/held_predictor.h"

namespace studio::ui {

Predictor& HeldPredictor::get(const std::string& folder, const PredictOptions& o, bool reload) {
  const std::string k = folder + "\n" + o.which.name() + "\n" + o.tta.name();
  if (!predictor || key != k || reload) {
    predictor.reset();
    predictor = std::make_unique<Predictor>(folder, o);
    key = k;
  }
  return *predictor;
}

void appendReport(PredictionReport& into, PredictionReport&& more) {
  if (into.model.empty()) {  // the first
    into = std::move(more);
    return;
  }
  into.rows.insert(into.rows.end(), more.rows.begin(), more.rows.end());
  into.probabilities.insert(into.probabilities.end(), more.probabilities.begin(), more.probabilities.end());
  into.features.insert(into.features.end(), more.features.begin(), more.features.end());
  into.values.insert(into.values.end(), more.values.begin(), more.values.end());
  into.masks.insert(into.masks.end(), more.masks.begin(), more.masks.end());
  into.skipped += more.skipped;
  into.labelled += more.labelled;
  into.correct += more.correct;
  into.boxesFound += more.boxesFound;
  into.masksWritten += more.masksWritten;
  into.seconds += more.seconds;
  if (into.confusion.empty())
    into.confusion = more.confusion;
  else
    for (size_t i = 0; i < more.confusion.size(); ++i)
      for (size_t j = 0; j < more.confusion[i].size(); ++j) into.confusion[i][j] += more.confusion[i][j];
}

}  // namespace studio::ui
