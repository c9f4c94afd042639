#pragma once
// The data plan's split helpers (data_plan.cpp, segmentation_plan.cpp): the
// seeds' streams, a split's seeded hold-out and limit. Torch-free.
// Thread: free functions, any thread.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "studio/data_plan.h"
#include "studio/data_split.h"

namespace studio {
namespace plan_split {

// Seeds of the splits, each its own stream of train.seed.
inline constexpr uint64_t kTestStream = 0x7e57, kValStream = 0x5eed, kLimitStream = 0x1157, kFoldStream = 0xf01d;

inline std::string percent(double f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g%%", f * 100.0);
  return buf;
}

inline void append(PlannedSplit& s, int64_t item, int64_t label) {
  s.items.push_back(item);
  s.labels.push_back(label);
}

// Takes `fraction` of each class out of `from` (seeded) and returns it.
inline PlannedSplit holdOut(PlannedSplit& from, double fraction, uint64_t seed, int64_t classes) {
  PlannedSplit held, kept;
  if (fraction <= 0) return held;
  const HeldOut h = stratifiedHoldOut(from.labels, std::max<int64_t>(classes, 1), fraction, seed);
  for (int64_t i : h.held) append(held, from.items[static_cast<size_t>(i)], from.labels[static_cast<size_t>(i)]);
  for (int64_t i : h.kept) append(kept, from.items[static_cast<size_t>(i)], from.labels[static_cast<size_t>(i)]);
  from = std::move(kept);
  return held;
}

// The first n (in order), or n chosen by a seeded shuffle, kept in order.
inline void limit(PlannedSplit& s, int64_t n, bool seeded, uint64_t seed) {
  if (n <= 0 || n >= s.size()) return;
  std::vector<int64_t> pick;
  if (seeded) {
    pick = seededPermutation(s.size(), seed);
    pick.resize(static_cast<size_t>(n));
    std::sort(pick.begin(), pick.end());
  } else {
    for (int64_t i = 0; i < n; ++i) pick.push_back(i);
  }
  PlannedSplit out;
  for (int64_t i : pick) append(out, s.items[static_cast<size_t>(i)], s.labels[static_cast<size_t>(i)]);
  s = std::move(out);
}

}  // namespace plan_split
}  // namespace studio
