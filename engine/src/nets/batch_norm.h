#pragma once
// The built-in models' BatchNorm: torch::nn::BatchNorm2d (the same
// parameters, buffers and names), which under torchrun with
// distributed.batchnorm sync normalises each training batch with the
// statistics of all ranks' shares of it together (PyTorch's SyncBatchNorm):
// the per-channel sums, sums of squares and counts are all-reduced, through
// an all-reduce that is differentiated (its backward all-reduces the
// gradients), so the result equals one process with the global batch.
// Thread: engine thread (the backward's all-reduce on the autograd engine's).

#include <torch/nn/modules/batchnorm.h>

namespace studio {

class ProcessGroup;

class BatchNorm2dImpl : public torch::nn::BatchNorm2dImpl {
 public:
  using torch::nn::BatchNorm2dImpl::BatchNorm2dImpl;
  torch::Tensor forward(const torch::Tensor& x);
  // nullptr: each process's own batch statistics (plain BatchNorm).
  void synchronise(ProcessGroup* group) { m_group = group; }

 private:
  ProcessGroup* m_group = nullptr;
};
TORCH_MODULE(BatchNorm2d);

}  // namespace studio
