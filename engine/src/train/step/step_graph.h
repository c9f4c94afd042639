#pragma once
// The optimizer step as one CUDA graph (performance.cuda_graphs): the
// recorder and replayer of at::cuda::CUDAGraph behind a header without CUDA.
// The graph is the CUDA plug-in's (cuda/cuda_side.h): where it is not loaded
// (no driver, a LibTorch without CUDA) `available()` is false and nothing
// here is called.
//
// How the trainer uses it (as torch.cuda.graphs documents for Python):
//  - the engine thread works on a side stream for the whole run
//    (`useSideStream`): capture must not be on the default stream, and the
//    eager warm-up steps must run on the stream the capture uses;
//  - a few eager steps first (cuDNN's autotuning, cuBLAS's workspace and the
//    autograd engine's lazy set-up happen there, never during capture);
//  - `capture(fn)` records what fn launches without running it; `replay()`
//    runs it. Inputs are static tensors the trainer copies new batches into.
// Thread: engine thread.

#include <functional>
#include <memory>
#include <string>

#include <torch/types.h>

namespace studio {

class StepGraph {
 public:
  // True when the CUDA plug-in is loaded (and so graphs can be captured).
  static bool available();
  // Makes a new stream from the pool the calling thread's current stream on
  // `device`, after the device finished what was queued so far.
  static void useSideStream(const torch::Device& device);

  StepGraph();
  ~StepGraph();
  StepGraph(const StepGraph&) = delete;
  StepGraph& operator=(const StepGraph&) = delete;

  // Records what `fn` launches on the current stream. On failure the stream
  // leaves capture mode, the partial graph is dropped, and this throws
  // std::runtime_error with the reason.
  void capture(const std::function<void()>& fn);
  void replay();
  bool captured() const;
  void reset();

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

}  // namespace studio
