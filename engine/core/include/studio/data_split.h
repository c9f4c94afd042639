#pragma once
// Seeded, stratified splits that are the same on every machine and in every
// front-end: the window's data preview counts exactly what the engine trains
// on. The random numbers are splitmix64, the shuffle Fisher-Yates (std::
// shuffle's draws are implementation-defined). Torch-free.
// Thread: free functions, any thread.

#include <cstdint>
#include <vector>

namespace studio {

// One step of splitmix64 over (a, b): distinct pairs give unrelated streams.
uint64_t mixSeed(uint64_t a, uint64_t b);

// 0..n-1 in an order that depends only on the seed.
std::vector<int64_t> seededPermutation(int64_t n, uint64_t seed);

// From each class c of `labels` (values 0..classes-1), floor(fraction * count_c)
// positions, chosen by a seeded shuffle; returned sorted. The rest are `kept`,
// sorted too.
struct HeldOut {
  std::vector<int64_t> held, kept;
};
HeldOut stratifiedHoldOut(const std::vector<int64_t>& labels, int64_t classes, double fraction, uint64_t seed);

// K stratified folds: each class's positions, in a seeded order, dealt to
// the folds in turn (scikit-learn's StratifiedKFold's idea: every fold holds
// each class's share, within one example). Returns each position's fold,
// 0..folds-1.
std::vector<int64_t> stratifiedFolds(const std::vector<int64_t>& labels, int64_t classes, int64_t folds, uint64_t seed);

// Examples per class among labels (values 0..classes-1).
std::vector<int64_t> classCounts(const std::vector<int64_t>& labels, int64_t classes);

}  // namespace studio
