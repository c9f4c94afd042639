// A segmentation's evaluation report (task.kind segmentation): the figures
// of its pixels' confusion matrix, each class's IoU, Dice and accuracy, and
// the matrix, as eval/step-N.json holds them. Torch-free.
#include <cmath>
#include <limits>

#include <nlohmann/json.hpp>

#include "studio/errors.h"
#include "studio/eval_report.h"

namespace studio {
namespace {

constexpr double kMissingFigure = std::numeric_limits<double>::quiet_NaN();

// NaN (undefined: a class in neither the truth nor the predictions) as null.
nlohmann::json orNull(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }
double orNaN(const nlohmann::json& j, const char* key) {
  const auto v = j.find(key);
  return v != j.end() && v->is_number() ? v->get<double>() : kMissingFigure;
}

}  // namespace

nlohmann::json segmentationReportJson(const EvalReport& r) {
  const SegmentationFigures& f = r.segmentation;
  nlohmann::json perClass = nlohmann::json::array();
  for (size_t c = 0; c < r.classes.size(); ++c) {
    int64_t pixels = 0, predicted = 0;
    for (size_t k = 0; k < r.confusion.size(); ++k) {
      if (c < r.confusion.size()) pixels += r.confusion[c][k];
      predicted += r.confusion[k][c];
    }
    perClass.push_back({{"class", r.classes[c]},
                        {"iou", orNull(c < f.iou.size() ? f.iou[c] : kMissingFigure)},
                        {"dice", orNull(c < f.dice.size() ? f.dice[c] : kMissingFigure)},
                        {"accuracy", orNull(c < f.classAccuracy.size() ? f.classAccuracy[c] : kMissingFigure)},
                        {"pixels", pixels},
                        {"predicted", predicted}});
  }
  return {{"pixel_accuracy", orNull(f.pixelAccuracy)},
          {"mean_class_accuracy", orNull(f.meanClassAccuracy)},
          {"mean_iou", orNull(f.meanIou)},
          {"mean_dice", orNull(f.meanDice)},
          {"frequency_weighted_iou", orNull(f.frequencyWeightedIou)},
          {"pixels", f.pixels},
          {"classes", r.classes},
          {"confusion", r.confusion},
          {"per_class", perClass}};
}

void readSegmentationReport(const nlohmann::json& j, EvalReport& r) {
  r.task = TaskKind::segmentation;
  r.classes = j.at("classes").get<std::vector<std::string>>();
  const size_t k = r.classes.size();
  r.confusion = confusionFromJson(j.at("confusion"), k);
  SegmentationFigures& f = r.segmentation;
  f.pixelAccuracy = orNaN(j, "pixel_accuracy");
  f.meanClassAccuracy = orNaN(j, "mean_class_accuracy");
  f.meanIou = orNaN(j, "mean_iou");
  f.meanDice = orNaN(j, "mean_dice");
  f.frequencyWeightedIou = orNaN(j, "frequency_weighted_iou");
  f.pixels = j.value("pixels", int64_t{0});
  const auto& perClass = j.at("per_class");
  if (!perClass.is_array() || perClass.size() != k) throw InputError("per_class is not one entry per class");
  for (const auto& c : perClass) {
    f.iou.push_back(orNaN(c, "iou"));
    f.dice.push_back(orNaN(c, "dice"));
    f.classAccuracy.push_back(orNaN(c, "accuracy"));
  }
  r.accuracy = f.pixelAccuracy;
}

}  // namespace studio
