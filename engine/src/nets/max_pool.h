#pragma once
// Max pooling on the CPU for the two windows the built-in networks use: 2 x 2
// with stride 2 (the built-in CNN's stages) and 3 x 3 with stride 2 and
// padding 1 (the ResNet stem's, in the classifiers', the detectors' and the
// segmenters' backbones). In PyTorch's own loop of the built-in CNN at batch
// 512 on the 2-core VM, ATen's max_pool2d_with_indices was the largest
// operator (58 of 247 ms a step): its NCHW kernel serves every window,
// dilation and padding with the same loops. This one, with the window fixed
// at compile time and unclipped windows apart from the edges, took 41
// against 69 ms for a (512, 32, 28, 28) batch and 173 against 237 ms for a
// ResNet stem's (2, 64, 400, 608) on one thread, half that on two (a
// vectorised kernel would do more). It gives the same outputs and the same
// argmax indices (the first largest value of the window in row order, a
// NaN taking the place as in ATen), so the backward pass is ATen's own
// max_pool2d_with_indices_backward and every gradient is bit for bit
// PyTorch's. Any other device, type, memory format or window goes to
// torch::max_pool2d.
// Thread: any (the pooling runs on the intra-op threads).

#include <torch/nn/modules/pooling.h>

namespace studio {

// torch::max_pool2d(x, kernel, stride, padding) with no dilation and floor
// rounding.
torch::Tensor maxPool2d(const torch::Tensor& x, int64_t kernel, int64_t stride, int64_t padding);

// torch::nn::MaxPool2d (its options, name and summary row) through maxPool2d.
class MaxPool2dImpl : public torch::nn::MaxPool2dImpl {
 public:
  using torch::nn::MaxPool2dImpl::MaxPool2dImpl;
  torch::Tensor forward(const torch::Tensor& x);
};
TORCH_MODULE(MaxPool2d);

}  // namespace studio
