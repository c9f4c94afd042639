#pragma once
// Class weights for an imbalanced classification (loss.class_weights) and
// the balanced sampler's per-example weights (data.sampler balanced).
//  - "none": no weights (an empty list);
//  - "balanced": n_samples / (n_classes * count_c), as scikit-learn's
//    compute_class_weight("balanced") computes them from the training split;
//  - "w0, w1, ...": one positive number per class, in the classes' order.
// Torch-free. Thread: free functions, any thread.

#include <cstdint>
#include <string>
#include <vector>

namespace studio {

// "" when `text` is one of the three forms, else what is wrong with it.
std::string classWeightsProblem(const std::string& text);

// The weights for these training counts per class (empty for "none"). Throws
// InputError naming loss.class_weights when a list has another length than
// there are classes, or "balanced" meets a class without training examples.
std::vector<double> classWeights(const std::string& text, const std::vector<int64_t>& counts,
                                 const std::vector<std::string>& classNames);

// Multi-label loss.pos_weight, the same three forms: "balanced" gives each
// label negatives / positives among the `examples` training rows. Throws
// InputError naming loss.pos_weight for a list of another length, or
// "balanced" meeting a label without positives.
std::vector<double> positiveWeights(const std::string& text, const std::vector<int64_t>& positives, int64_t examples,
                                    const std::vector<std::string>& labelNames);

}  // namespace studio
