#pragma once
// One image's boxes against its true ones, as COCO matches them: by score,
// each found box takes the unmatched true box of its class that it overlaps
// most, at IoU `iou` or more; found boxes below minScore are left out, and
// crowds are not among the true boxes. The Evaluation tab's test images
// (worst first) count their errors with it. Torch-free. Thread: any.
//
// Truth and Found: any box with x, y, width, height (pixels) and label;
// Found also with score (the window's DrawnBox, the engine's PredictedBox).

#include <algorithm>
#include <vector>

#include "studio/coco_eval.h"

namespace studio {

struct BoxErrors {
  int matched = 0, missed = 0, falsePositives = 0;
};

template <class Truth, class Found>
BoxErrors matchBoxes(const std::vector<Truth>& truth, const std::vector<Found>& found, double minScore,
                     double iou = 0.5) {
  std::vector<size_t> order;
  for (size_t i = 0; i < found.size(); ++i)
    if (found[i].score >= minScore) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return found[a].score > found[b].score; });
  std::vector<bool> taken(truth.size(), false);
  BoxErrors e;
  for (const size_t i : order) {
    const auto& f = found[i];
    double best = iou;
    int match = -1;
    for (size_t t = 0; t < truth.size(); ++t) {
      if (taken[t] || truth[t].label != f.label) continue;
      const double o =
          cocoIou({f.x, f.y, f.width, f.height}, {truth[t].x, truth[t].y, truth[t].width, truth[t].height}, false);
      if (o >= best) {
        best = o;
        match = static_cast<int>(t);
      }
    }
    if (match >= 0) {
      taken[static_cast<size_t>(match)] = true;
      ++e.matched;
    } else {
      ++e.falsePositives;
    }
  }
  e.missed = static_cast<int>(truth.size()) - e.matched;
  return e;
}

}  // namespace studio
