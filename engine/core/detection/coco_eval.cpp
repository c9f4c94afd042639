#include "studio/coco_eval.h"

#include <algorithm>
#include <cfloat>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <stdexcept>
#include <string>

#include "studio/box_annotations.h"

namespace studio {
namespace {

constexpr int kT = 10;   // IoU thresholds .50:.05:.95
constexpr int kR = 101;  // recall thresholds 0:.01:1
constexpr int kA = 4;    // area ranges: all, small, medium, large
constexpr std::array<int, 3> kMaxDets{1, 10, 100};
constexpr std::array<std::array<double, 2>, kA> kAreas{
    {{0, 1e5 * 1e5}, {0, 32.0 * 32}, {32.0 * 32, 96.0 * 96}, {96.0 * 96, 1e5 * 1e5}}};

// numpy.linspace(start, stop, n): i * step + start, the last one stop.
std::vector<double> linspace(double start, double stop, int n) {
  std::vector<double> v(static_cast<size_t>(n));
  const double step = (stop - start) / (n - 1);
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = i * step + start;
  v.back() = stop;
  return v;
}

// Indices sorting by descending score, ties in their order (numpy's
// argsort(-score, kind="mergesort")).
std::vector<size_t> byScore(const std::vector<double>& scores) {
  std::vector<size_t> order(scores.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return -scores[a] < -scores[b]; });
  return order;
}

// evaluateImg's result for one image, category and area range: its
// detections (best first, at most 100), matched or not and ignored or not at
// each threshold, and how many of its ground truths count.
struct ImageEval {
  std::vector<double> scores;
  std::vector<std::array<char, kT>> matched, ignored;  // per detection
  int64_t counted = 0;                                 // ground truths not ignored
};

ImageEval evaluateImage(const std::vector<const CocoBox*>& gtIn, const std::vector<const CocoBox*>& dtSorted,
                        const std::vector<double>& dtAreas, const std::vector<std::vector<double>>& ious,
                        const std::array<double, 2>& range, const std::vector<double>& thresholds) {
  const size_t G = gtIn.size();
  std::vector<char> gtIgnore(G);
  for (size_t g = 0; g < G; ++g) gtIgnore[g] = gtIn[g]->crowd || gtIn[g]->area < range[0] || gtIn[g]->area > range[1];
  // The ground truths that count first (a stable sort by ignore).
  std::vector<size_t> gtOrder(G);
  std::iota(gtOrder.begin(), gtOrder.end(), size_t{0});
  std::stable_sort(gtOrder.begin(), gtOrder.end(), [&](size_t a, size_t b) { return gtIgnore[a] < gtIgnore[b]; });
  ImageEval e;
  const size_t D = dtSorted.size();
  e.matched.assign(D, {});
  e.ignored.assign(D, {});
  for (const auto* d : dtSorted) e.scores.push_back(d->score);
  for (size_t g = 0; g < G; ++g) e.counted += !gtIgnore[g];
  if (D > 0 && G > 0)
    for (int t = 0; t < kT; ++t) {
      std::vector<char> gtTaken(G, 0);  // in gtOrder's order
      for (size_t d = 0; d < D; ++d) {
        double best = std::min(thresholds[static_cast<size_t>(t)], 1 - 1e-10);
        int64_t m = -1;
        for (size_t k = 0; k < G; ++k) {
          const size_t g = gtOrder[k];
          if (gtTaken[k] && !gtIn[g]->crowd) continue;
          if (m > -1 && !gtIgnore[gtOrder[static_cast<size_t>(m)]] && gtIgnore[g]) break;
          if (ious[d][g] < best) continue;
          best = ious[d][g];
          m = static_cast<int64_t>(k);
        }
        if (m == -1) continue;
        e.ignored[d][static_cast<size_t>(t)] = gtIgnore[gtOrder[static_cast<size_t>(m)]];
        e.matched[d][static_cast<size_t>(t)] = 1;
        gtTaken[static_cast<size_t>(m)] = 1;
      }
    }
  for (size_t d = 0; d < D; ++d) {
    const bool outside = dtAreas[d] < range[0] || dtAreas[d] > range[1];
    for (int t = 0; t < kT; ++t)
      if (!e.matched[d][static_cast<size_t>(t)] && outside) e.ignored[d][static_cast<size_t>(t)] = 1;
  }
  return e;
}

void requireMask(const CocoBox& b, const char* what) {
  if (!b.mask)
    throw std::invalid_argument(std::string("COCO segm evaluation: a ") + what + " of image " +
                                std::to_string(b.image) + ", category " + std::to_string(b.category) + " has no mask");
}

double meanOfPresent(const std::vector<double>& v) {
  double sum = 0;
  int64_t n = 0;
  for (double x : v)
    if (x > -1) sum += x, ++n;
  return n ? sum / static_cast<double>(n) : -1;
}

}  // namespace

double cocoIou(const std::array<double, 4>& d, const std::array<double, 4>& g, bool crowd) {
  const double w = std::min(d[2] + d[0], g[2] + g[0]) - std::max(d[0], g[0]);
  if (w <= 0) return 0;
  const double h = std::min(d[3] + d[1], g[3] + g[1]) - std::max(d[1], g[1]);
  if (h <= 0) return 0;
  const double i = w * h;
  const double da = d[2] * d[3], ga = g[2] * g[3];
  return i / (crowd ? da : da + ga - i);
}

CocoStats cocoEvaluate(const std::vector<int64_t>& imageIdsIn, const std::vector<CocoBox>& groundTruth,
                       const std::vector<CocoBox>& detections, CocoIouType iouType) {
  const bool segm = iouType == CocoIouType::segm;
  const std::vector<double> iouThresholds = linspace(0.5, 0.95, kT), recallThresholds = linspace(0, 1, kR);
  std::vector<int64_t> images(imageIdsIn);
  std::sort(images.begin(), images.end());
  images.erase(std::unique(images.begin(), images.end()), images.end());
  std::set<int64_t> categorySet;
  for (const auto& g : groundTruth) categorySet.insert(g.category);
  CocoStats out;
  out.categories.assign(categorySet.begin(), categorySet.end());
  const size_t K = out.categories.size(), I = images.size();
  std::map<int64_t, size_t> imageAt, categoryAt;
  for (size_t i = 0; i < I; ++i) imageAt[images[i]] = i;
  for (size_t k = 0; k < K; ++k) categoryAt[out.categories[k]] = k;
  // Boxes by (category, image), in the order given.
  std::vector<std::vector<const CocoBox*>> gts(K * I), dts(K * I);
  for (const auto& g : groundTruth)
    if (imageAt.count(g.image)) gts[categoryAt.at(g.category) * I + imageAt.at(g.image)].push_back(&g);
  for (const auto& d : detections)
    if (imageAt.count(d.image) && categoryAt.count(d.category))
      dts[categoryAt.at(d.category) * I + imageAt.at(d.image)].push_back(&d);

  // precision[t][r][k][a][m] and recall[t][k][a][m], -1 where not measured.
  const size_t M = kMaxDets.size();
  std::vector<double> precision(kT * kR * K * kA * M, -1.0), recall(kT * K * kA * M, -1.0);
  auto P = [&](size_t t, size_t r, size_t k, size_t a, size_t m) -> double& {
    return precision[(((t * kR + r) * K + k) * kA + a) * M + m];
  };
  auto Rc = [&](size_t t, size_t k, size_t a, size_t m) -> double& { return recall[((t * K + k) * kA + a) * M + m]; };

  for (size_t k = 0; k < K; ++k) {
    // Per image: the detections by score (at most 100) and their IoUs.
    std::vector<std::vector<const CocoBox*>> sorted(I);
    std::vector<std::vector<std::vector<double>>> ious(I);
    std::vector<std::vector<double>> dtAreas(I);  // a detection's: its box's (segm: its mask's)
    std::vector<char> present(I, 0);
    for (size_t i = 0; i < I; ++i) {
      const auto& gt = gts[k * I + i];
      const auto& dt = dts[k * I + i];
      if (gt.empty() && dt.empty()) continue;
      present[i] = 1;
      std::vector<double> scores;
      for (const auto* d : dt) scores.push_back(d->score);
      for (size_t j : byScore(scores)) {
        if (sorted[i].size() == static_cast<size_t>(kMaxDets.back())) break;
        sorted[i].push_back(dt[j]);
      }
      if (segm)
        for (const auto* b : gt) requireMask(*b, "ground truth");
      ious[i].assign(sorted[i].size(), std::vector<double>(gt.size(), 0.0));
      for (size_t d = 0; d < sorted[i].size(); ++d) {
        const CocoBox& det = *sorted[i][d];
        if (segm) requireMask(det, "detection");
        dtAreas[i].push_back(segm ? static_cast<double>(rleArea(*det.mask)) : det.box[2] * det.box[3]);
        for (size_t g = 0; g < gt.size(); ++g)
          ious[i][d][g] =
              segm ? rleIou(*det.mask, *gt[g]->mask, gt[g]->crowd) : cocoIou(det.box, gt[g]->box, gt[g]->crowd);
      }
    }
    // The detections of the images present (at most 100 each), by score,
    // once: the same for every area range, and a stable sort of fewer per
    // image (maxDets 1, 10) is this order without the others.
    std::vector<double> allScores;
    std::vector<std::pair<size_t, size_t>> which;  // (present image, detection)
    size_t presentCount = 0;
    for (size_t i = 0; i < I; ++i) {
      if (!present[i]) continue;
      for (size_t d = 0; d < sorted[i].size(); ++d) {
        allScores.push_back(sorted[i][d]->score);
        which.emplace_back(presentCount, d);
      }
      ++presentCount;
    }
    const std::vector<size_t> allOrder = byScore(allScores);
    std::vector<size_t> order;
    std::vector<double> rc, pr;
    order.reserve(allOrder.size()), rc.reserve(allOrder.size()), pr.reserve(allOrder.size());
    for (size_t a = 0; a < kA; ++a) {
      std::vector<ImageEval> evals;
      for (size_t i = 0; i < I; ++i)
        if (present[i])
          evals.push_back(evaluateImage(gts[k * I + i], sorted[i], dtAreas[i], ious[i], kAreas[a], iouThresholds));
      if (evals.empty()) continue;
      int64_t counted = 0;
      for (const auto& e : evals) counted += e.counted;
      if (counted == 0) continue;
      for (size_t m = 0; m < M; ++m) {
        const auto maxDet = static_cast<size_t>(kMaxDets[m]);
        order.clear();
        for (size_t j : allOrder)
          if (which[j].second < maxDet) order.push_back(j);
        for (size_t t = 0; t < static_cast<size_t>(kT); ++t) {
          rc.clear(), pr.clear();
          double tp = 0, fp = 0;
          for (size_t j : order) {
            const auto& [e, d] = which[j];
            if (evals[e].ignored[d][t]) {
              // neither a true nor a false positive: the sums stay
            } else if (evals[e].matched[d][t]) {
              tp += 1;
            } else {
              fp += 1;
            }
            rc.push_back(tp / static_cast<double>(counted));
            pr.push_back(tp / (fp + tp + DBL_EPSILON));
          }
          const size_t nd = rc.size();
          Rc(t, k, a, m) = nd ? rc.back() : 0;
          for (size_t i = nd > 0 ? nd - 1 : 0; i > 0; --i)
            if (pr[i] > pr[i - 1]) pr[i - 1] = pr[i];
          for (size_t r = 0; r < static_cast<size_t>(kR); ++r) {
            const size_t at = static_cast<size_t>(std::lower_bound(rc.begin(), rc.end(), recallThresholds[r]) -
                                                  rc.begin());  // searchsorted left
            P(t, r, k, a, m) = at < nd ? pr[at] : 0;
          }
        }
      }
    }
  }

  // COCOeval.summarize's twelve figures.
  auto ap = [&](int t, size_t a, size_t m) {
    std::vector<double> v;
    for (size_t tt = 0; tt < static_cast<size_t>(kT); ++tt)
      if (t < 0 || tt == static_cast<size_t>(t))
        for (size_t r = 0; r < static_cast<size_t>(kR); ++r)
          for (size_t k = 0; k < K; ++k) v.push_back(P(tt, r, k, a, m));
    return meanOfPresent(v);
  };
  auto ar = [&](size_t a, size_t m) {
    std::vector<double> v;
    for (size_t t = 0; t < static_cast<size_t>(kT); ++t)
      for (size_t k = 0; k < K; ++k) v.push_back(Rc(t, k, a, m));
    return meanOfPresent(v);
  };
  out.stats = {ap(-1, 0, 2), ap(0, 0, 2), ap(5, 0, 2), ap(-1, 1, 2), ap(-1, 2, 2), ap(-1, 3, 2),
               ar(0, 0),     ar(0, 1),    ar(0, 2),    ar(1, 2),     ar(2, 2),     ar(3, 2)};
  for (size_t k = 0; k < K; ++k) {
    std::vector<double> v;
    std::vector<double> p50, p75;
    for (size_t t = 0; t < static_cast<size_t>(kT); ++t)
      for (size_t r = 0; r < static_cast<size_t>(kR); ++r) v.push_back(P(t, r, k, 0, 2));
    for (size_t r = 0; r < static_cast<size_t>(kR); ++r) {
      p50.push_back(P(0, r, k, 0, 2));
      p75.push_back(P(5, r, k, 0, 2));
    }
    out.apPerCategory.push_back(meanOfPresent(v));
    out.precision50.push_back(p50);
    out.precision75.push_back(p75);
  }
  return out;
}

CocoStats cocoEvaluateMasks(const std::vector<int64_t>& imageIds, const std::vector<CocoBox>& groundTruth,
                            std::vector<CocoBox> detections, const std::vector<Rle>& masks) {
  if (masks.size() != detections.size())
    throw std::invalid_argument("segm: " + std::to_string(masks.size()) + " masks for " +
                                std::to_string(detections.size()) + " detections");
  for (size_t k = 0; k < detections.size(); ++k) detections[k].mask = &masks[k];
  return cocoEvaluate(imageIds, groundTruth, detections, CocoIouType::segm);
}

std::vector<CocoBox> cocoGroundTruth(const BoxAnnotations& a, bool byIndex, const std::vector<char>& keep) {
  std::vector<CocoBox> out;
  const bool masks = a.masks.size() == a.boxes.size();
  for (size_t i = 0; i < a.boxes.size(); ++i) {
    const AnnotatedBox& b = a.boxes[i];
    const auto image = static_cast<size_t>(b.image);
    if (!keep.empty() && !keep[image]) continue;
    CocoBox t;
    t.image = byIndex ? b.image : a.images[image].id;
    t.category = a.categories[static_cast<size_t>(b.label)].id;
    t.box = {b.x, b.y, b.w, b.h};
    t.area = b.area;
    t.crowd = b.crowd;
    if (masks) t.mask = &a.masks[i];
    out.push_back(t);
  }
  return out;
}

CocoPerClass cocoPerClass(const CocoStats& stats, const std::vector<int64_t>& categoryIds) {
  CocoPerClass out;
  for (const int64_t id : categoryIds) {
    double ap = std::numeric_limits<double>::quiet_NaN();
    std::vector<double> curve;
    for (size_t k = 0; k < stats.categories.size(); ++k)
      if (stats.categories[k] == id && stats.apPerCategory[k] >= 0) {
        ap = stats.apPerCategory[k];
        curve = stats.precision50[k];
      }
    out.ap.push_back(ap);
    out.precision50.push_back(std::move(curve));
  }
  return out;
}

}  // namespace studio
