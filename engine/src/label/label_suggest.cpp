// The order to label a folder's images in (studio/label_suggest.h): the
// run's predictions with their penultimate features (predict's own), each
// image's uncertainty, and the audit's cosine search for near-copies.
#include "studio/label_suggest.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "audit/feature_search.h"
#include "studio/box_predict.h"
#include "studio/errors.h"
#include "studio/predict.h"

namespace studio {

std::vector<double> uncertainties(const std::vector<float>& p, int64_t classes, Uncertainty how) {
  std::vector<double> out;
  if (classes <= 0) return out;
  const size_t k = static_cast<size_t>(classes);
  for (size_t row = 0; row + k <= p.size(); row += k) {
    const float* q = p.data() + row;
    double first = 0, second = 0, entropy = 0;
    for (size_t c = 0; c < k; ++c) {
      const double v = q[c];
      if (v > first) {
        second = first;
        first = v;
      } else if (v > second) {
        second = v;
      }
      if (v > 0) entropy -= v * std::log(v);
    }
    out.push_back(how == Uncertainty::least_confidence ? 1 - first
                  : how == Uncertainty::margin         ? 1 - (first - second)
                                                       : entropy);
  }
  return out;
}

double boxesUncertainty(const std::vector<double>& scores, Uncertainty how) {
  double most = 0;
  for (const double score : scores) {
    const double s = std::clamp(score, 0.0, 1.0);
    double u = 1 - std::abs(2 * s - 1);
    if (how == Uncertainty::entropy) {
      u = 0;
      if (s > 0) u -= s * std::log(s);
      if (s < 1) u -= (1 - s) * std::log(1 - s);
    }
    most = std::max(most, u);
  }
  return most;
}

namespace {

// The run's predictions for the folder's images (unreadable ones as rows
// with their reason); boxes: a detector's. InputError, starting with
// `what`, for a run that is neither a classifier of images nor a detector.
PredictionReport predictImages(const std::string& run, const std::string& folder, PredictOptions po,
                               const std::string& what, const std::function<bool(int64_t, int64_t)>& progress,
                               bool& boxes) {
  po.skipBad = true;
  Predictor predictor(run, po);
  boxes = boxesTask(predictor.task());
  if (!boxes && (predictor.task() != TaskKind::classification || predictor.input() != PredictInput::image))
    throw InputError(what + "; " + run + " is a " + Choice<TaskKind>(predictor.task()).name() + " run" +
                     (predictor.input() == PredictInput::table ? " on a table" : ""));
  return predictor.predict(folder, progress);
}

}  // namespace

Suggestion suggestLabellingOrder(const std::string& run, const std::string& folder, const SuggestOptions& o,
                                 const std::function<bool(int64_t, int64_t)>& progress) {
  if (!(o.similarity > 0)) throw InputError("--similarity must be above 0 (1: exact copies only; above 1: no guard)");
  PredictOptions po;
  po.penultimate = true;
  po.topK = 1;
  po.device = o.device;
  bool boxes = false;
  const PredictionReport r = predictImages(
      run, folder, po, "label --suggest orders images by a classifier's or a detector's uncertainty", progress, boxes);
  Suggestion s;
  s.model = r.model;
  s.classes = r.classes;
  const auto k = static_cast<int64_t>(r.classes.size());
  std::vector<double> u;
  std::vector<size_t> leastSure(r.rows.size(), 0);  // a detector's: each image's least confident box
  if (boxes) {
    for (size_t i = 0; i < r.rows.size(); ++i) {
      double most = 0;  // boxesUncertainty's: the largest of its boxes', 0 without any
      for (size_t b = 0; b < r.rows[i].boxes.size(); ++b)
        if (const double one = boxesUncertainty({r.rows[i].boxes[b].score}, o.strategy.value()); one > most)
          most = one, leastSure[i] = b;
      u.push_back(most);
    }
  } else {
    u = uncertainties(r.probabilities, k, o.strategy.value());
  }
  std::vector<size_t> rows;
  for (size_t i = 0; i < r.rows.size(); ++i) {
    if (r.rows[i].error.empty())
      rows.push_back(i);
    else
      s.skipped.push_back(r.rows[i].source + ": " + r.rows[i].error);
  }
  if (rows.empty()) throw InputError("label --suggest: no image under " + folder + " could be read");
  std::stable_sort(rows.begin(), rows.end(), [&](size_t a, size_t b) { return u[a] > u[b]; });
  // The diversity guard: each image's near-copies (rows of the report).
  std::vector<std::vector<size_t>> similar(r.rows.size());
  s.guarded = r.penultimateSize > 0 && o.similarity <= 1;
  if (s.guarded)
    for (const SimilarPair& p : similarPairs(r.penultimate, r.penultimate, r.penultimateSize, o.similarity, true)) {
      similar[static_cast<size_t>(p.first)].push_back(static_cast<size_t>(p.second));
      similar[static_cast<size_t>(p.second)].push_back(static_cast<size_t>(p.first));
    }
  std::vector<char> placed(r.rows.size(), 0);
  std::vector<std::pair<size_t, size_t>> deferred;  // (row, the placed row it nearly copies)
  auto entry = [&](size_t i) {
    const PredictionRow& row = r.rows[i];
    SuggestedImage e;
    e.file = row.source;
    e.uncertainty = u[i];
    if (boxes) {  // the least confident box's class and score
      e.predicted = row.boxes.empty() ? -1 : row.boxes[leastSure[i]].label;
      e.probability = row.boxes.empty() ? 0.0F : static_cast<float>(row.boxes[leastSure[i]].score);
    } else {
      e.predicted = row.top.empty() ? 0 : row.top[0];
      e.probability = row.probability.empty() ? 0.0F : row.probability[0];
    }
    return e;
  };
  for (const size_t i : rows) {
    const auto copy = std::find_if(similar[i].begin(), similar[i].end(), [&](size_t j) { return placed[j] != 0; });
    if (copy != similar[i].end()) {
      deferred.emplace_back(i, *copy);
      continue;
    }
    placed[i] = 1;
    s.order.push_back(entry(i));
  }
  for (const auto& [i, of] : deferred) {
    SuggestedImage e = entry(i);
    e.nearCopyOf = r.rows[of].source;
    s.order.push_back(e);
  }
  s.nearCopies = static_cast<int64_t>(deferred.size());
  return s;
}

nlohmann::json prelabelImages(const std::string& run, const std::string& folder, const PrelabelOptions& o,
                              const std::function<bool(int64_t, int64_t)>& progress) {
  if (o.topK < 1) throw InputError("--top-k must be 1 or more");
  if (!(o.minScore >= 0 && o.minScore <= 1)) throw InputError("--min-score must be from 0 to 1");
  PredictOptions po;
  po.topK = o.topK;
  po.device = o.device;
  bool boxes = false;
  const PredictionReport r = predictImages(
      run, folder, po,
      "label --prelabel proposes a classifier's classes or a detector's boxes for images (a segmenter's masks are "
      "still to come)",
      progress, boxes);
  nlohmann::json doc = {{"format", 1},
                        {"model", r.model},
                        {"run", run},
                        {"weights", r.weights},
                        {"task", boxes ? "detection" : "classification"},
                        {"classes", r.classes},
                        {"images", nlohmann::json::array()},
                        {"skipped", nlohmann::json::array()}};
  if (boxes) {
    doc["min_score"] = o.minScore;
    doc["categories"] = nlohmann::json::array();
    for (size_t k = 0; k < r.classes.size(); ++k)
      doc["categories"].push_back(
          {{"id", k < r.categoryIds.size() ? r.categoryIds[k] : static_cast<int64_t>(k)}, {"name", r.classes[k]}});
  }
  for (const PredictionRow& row : r.rows) {
    if (!row.error.empty()) {
      doc["skipped"].push_back(row.source + ": " + row.error);
      continue;
    }
    nlohmann::json image = {{"file", row.source}, {"made_by", "model"}};
    if (boxes) {
      image["boxes"] = nlohmann::json::array();
      for (const PredictedBox& b : row.boxes) {
        if (b.score < o.minScore) continue;
        const auto k = static_cast<size_t>(b.label);
        image["boxes"].push_back({{"x", b.x},
                                  {"y", b.y},
                                  {"width", b.width},
                                  {"height", b.height},
                                  {"class", r.classes.at(k)},
                                  {"category_id", k < r.categoryIds.size() ? r.categoryIds[k] : b.label},
                                  {"score", b.score}});
      }
    } else {
      image["top"] = nlohmann::json::array();
      for (size_t j = 0; j < row.top.size(); ++j)
        image["top"].push_back(
            {{"class", r.classes.at(static_cast<size_t>(row.top[j]))}, {"probability", row.probability[j]}});
      image["class"] = row.top.empty() ? "" : r.classes.at(static_cast<size_t>(row.top[0]));
      image["probability"] = row.probability.empty() ? 0.0F : row.probability[0];
    }
    doc["images"].push_back(std::move(image));
  }
  return doc;
}

}  // namespace studio
