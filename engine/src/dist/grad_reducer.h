#pragma once
// Data-parallel gradients: the parameters' gradients summed over the ranks
// in buckets of about distributed.bucket_mib, each bucket's all-reduce
// started from the backward pass as soon as its last gradient is
// accumulated (a post-accumulate-grad hook per parameter, as PyTorch's DDP
// reducer does), so communication overlaps the rest of the backward pass.
// Buckets are launched strictly in order (bucket 0 holds the last layers,
// whose gradients come first) so every rank issues the same collectives in
// the same order; finish() launches what the hooks did not (a rank whose
// share of the batch was empty, parameters without a gradient) and waits.
//
// The loss of each example is weighed by 1 / (the global group's examples)
// before backward, so the sum over ranks is the global mean gradient.
// Thread: arm/finish on the engine thread; the hooks run on the autograd
// engine's thread, under a mutex.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <torch/types.h>

namespace studio {

class ProcessGroup;

class GradReducer {
 public:
  GradReducer(std::vector<torch::Tensor> params, ProcessGroup& group, int64_t bucketBytes);
  ~GradReducer();
  GradReducer(const GradReducer&) = delete;
  GradReducer& operator=(const GradReducer&) = delete;

  // The next backward pass is the group's last: its hooks start the buckets.
  void arm();
  // Every bucket reduced and copied back into the gradients; `step` for errors.
  void finish(int64_t step);
  size_t buckets() const;

  struct State;

 private:
  std::shared_ptr<State> m_state;
};

}  // namespace studio
