#include "studio/data_split.h"

#include <algorithm>
#include <numeric>

namespace studio {

uint64_t mixSeed(uint64_t a, uint64_t b) {
  uint64_t z = a + 0x9e3779b97f4a7c15ULL * (b + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::vector<int64_t> seededPermutation(int64_t n, uint64_t seed) {
  std::vector<int64_t> p(static_cast<size_t>(std::max<int64_t>(n, 0)));
  std::iota(p.begin(), p.end(), int64_t{0});
  uint64_t state = seed;
  for (int64_t i = n - 1; i > 0; --i) {
    state = mixSeed(state, static_cast<uint64_t>(i));
    // Multiply-shift maps the 64 random bits onto 0..i without modulo bias
    // worth speaking of (i < 2^40 here).
    const auto j = static_cast<int64_t>((static_cast<unsigned __int128>(state) * static_cast<uint64_t>(i + 1)) >> 64);
    std::swap(p[static_cast<size_t>(i)], p[static_cast<size_t>(j)]);
  }
  return p;
}

HeldOut stratifiedHoldOut(const std::vector<int64_t>& labels, int64_t classes, double fraction, uint64_t seed) {
  HeldOut out;
  std::vector<std::vector<int64_t>> byClass(static_cast<size_t>(std::max<int64_t>(classes, 0)));
  for (size_t i = 0; i < labels.size(); ++i) byClass[static_cast<size_t>(labels[i])].push_back(static_cast<int64_t>(i));
  std::vector<char> held(labels.size(), 0);
  for (size_t c = 0; c < byClass.size(); ++c) {
    const auto& members = byClass[c];
    const auto n = static_cast<int64_t>(members.size());
    const auto take = static_cast<int64_t>(fraction * static_cast<double>(n));
    if (take <= 0) continue;
    const std::vector<int64_t> order = seededPermutation(n, mixSeed(seed, c));
    for (int64_t k = 0; k < take; ++k) held[static_cast<size_t>(members[static_cast<size_t>(order[k])])] = 1;
  }
  for (size_t i = 0; i < labels.size(); ++i) (held[i] ? out.held : out.kept).push_back(static_cast<int64_t>(i));
  return out;
}

std::vector<int64_t> stratifiedFolds(const std::vector<int64_t>& labels, int64_t classes, int64_t folds,
                                     uint64_t seed) {
  std::vector<int64_t> fold(labels.size(), 0);
  if (folds <= 1) return fold;
  std::vector<std::vector<int64_t>> byClass(static_cast<size_t>(std::max<int64_t>(classes, 0)));
  for (size_t i = 0; i < labels.size(); ++i) byClass[static_cast<size_t>(labels[i])].push_back(static_cast<int64_t>(i));
  // Each class continues where the last one's deal ended, so the folds' sizes
  // differ by at most one as well.
  int64_t next = 0;
  for (size_t c = 0; c < byClass.size(); ++c) {
    const auto& members = byClass[c];
    const std::vector<int64_t> order = seededPermutation(static_cast<int64_t>(members.size()), mixSeed(seed, c));
    for (int64_t k : order) {
      fold[static_cast<size_t>(members[static_cast<size_t>(k)])] = next;
      next = (next + 1) % folds;
    }
  }
  return fold;
}

std::vector<int64_t> classCounts(const std::vector<int64_t>& labels, int64_t classes) {
  std::vector<int64_t> counts(static_cast<size_t>(std::max<int64_t>(classes, 0)), 0);
  for (int64_t l : labels)
    if (l >= 0 && l < classes) ++counts[static_cast<size_t>(l)];
  return counts;
}

}  // namespace studio
