#pragma once
// Which unlabelled images to label first (issue 62, item 4): a trained
// classifier's (or detector's) uncertainty about each image of a folder, highest first,
// with a diversity guard so that the next batch is not a run of
// near-copies: an image whose penultimate features (the audit's feature
// space) have at least `similarity` cosine similarity with an image placed
// before it goes after every image that has none, in its own order, naming
// the image it nearly copies.
// Uncertainty, from the probabilities p of an image (Settles, "Active
// Learning Literature Survey", 2009, section 3.1):
//   least_confidence  1 - max p
//   margin            1 - (p1 - p2), p1 and p2 the two largest
//   entropy           -sum p log p (natural log; 0 log 0 = 0)
// Ties keep the folder's order (a stable sort).
// Thread: the caller's.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "studio/choice.h"

namespace studio {

STUDIO_CHOICE_NAMED(Uncertainty, "least-confidence, margin, entropy", least_confidence, margin, entropy)

// Each row's uncertainty: probabilities is rows x classes, row-major.
std::vector<double> uncertainties(const std::vector<float>& probabilities, int64_t classes, Uncertainty how);
// A detector's image: the uncertainty of its least confident detection,
// each detection's score s the probability that it is an object of its
// class: least confidence and margin are then both 1 - |2s - 1| (a box at
// 0.5 is the least sure), entropy -(s ln s + (1 - s) ln(1 - s)); an image
// without detections: 0.
double boxesUncertainty(const std::vector<double>& scores, Uncertainty how);

struct SuggestOptions {
  Choice<Uncertainty> strategy = Uncertainty::least_confidence;
  double similarity = 0.95;  // the diversity guard's cosine similarity; above 1: off
  std::string device = "auto";
};

struct SuggestedImage {
  std::string file;
  double uncertainty = 0;
  int64_t predicted = 0;   // the class the model gives it, into Suggestion::classes (a detector's: its least
                           // confident box's; -1 for an image without boxes)
  float probability = 0;   // of that class (a detector's: that box's score)
  std::string nearCopyOf;  // the image placed before it that it nearly copies ("" for none)
};

struct Suggestion {
  std::string model;  // what predicted (PredictionReport::model)
  std::vector<std::string> classes;
  std::vector<SuggestedImage> order;  // the order to label in
  std::vector<std::string> skipped;   // "file: why" of images that could not be read
  int64_t nearCopies = 0;             // images moved after the others
  bool guarded = false;               // the model gave features to compare (a TorchScript one or a detector gives none)
};

// The images under folder in the order to label them, by run's classifier
// or detector (a run or export folder). Throws InputError for a run that is
// neither, a folder without images, a similarity of 0 or less.
Suggestion suggestLabellingOrder(const std::string& run, const std::string& folder, const SuggestOptions& options,
                                 const std::function<bool(int64_t, int64_t)>& progress = {});

// The model's proposals for a folder's images (label --prelabel, issue 62,
// item 3): a classifier's class for each image with its probability (and
// the next most probable, topK in all); a detector's boxes scored at least
// minScore. Each proposal says who made it ("made_by": "model") and what
// (the run's model and weights), so that a labels file can keep apart what
// a person made, accepted or corrected. As JSON:
//   {"format": 1, "model": ..., "run": ..., "task": "classification" | "detection",
//    "classes": [...], ("categories": [{"id", "name"}, ...] for boxes,)
//    "images": [{"file", "made_by": "model",
//                classes: "class", "probability", "top": [{"class", "probability"}, ...]
//                boxes:   "boxes": [{"x", "y", "width", "height", "class", "category_id", "score"}, ...]},
//               ...],
//    "skipped": ["file: why", ...]}
// Rows of images that could not be read are in "skipped", not "images".
struct PrelabelOptions {
  int64_t topK = 3;       // a classifier's classes kept per image
  double minScore = 0.5;  // a detector's boxes kept
  std::string device = "auto";
};
nlohmann::json prelabelImages(const std::string& run, const std::string& folder, const PrelabelOptions& options,
                              const std::function<bool(int64_t, int64_t)>& progress = {});

}  // namespace studio
