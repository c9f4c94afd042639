#pragma once
// The engine's CUDA-only code (CUDA graphs, side streams, a GPU's name and
// memory, NCCL) lives in a plug-in, libstudio_cuda.so, that links LibTorch's
// CUDA half (libtorch_cuda.so and the CUDA libraries it loads: cuBLAS,
// cuDNN, NCCL, ...). The programs link only LibTorch's CPU half and load the
// plug-in when the process starts, before LibTorch is asked about CUDA
// (LibTorch keeps the first answer of at::detail::getCUDAHooks()), and only
// where an NVIDIA driver is installed: without one no GPU can be used, and
// loading the CUDA libraries cost each process 0.14 s of CPU (0.40 s against
// 0.26 s for a program that only starts LibTorch, on the 2-core VM).
//
// STUDIO_CUDA=0 never loads it (the CPU alone, as without a driver), =1
// always (where the driver is missing too: the suites check that it loads);
// unset, it loads where libcuda.so.1 does. STUDIO_CUDA_PLUGIN names the
// plug-in's file; otherwise it is looked for beside the program, then in the
// build folder.
// Thread: any; loaded once, before main.

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include <c10/util/intrusive_ptr.h>

namespace c10d {
class Store;
class Backend;
}  // namespace c10d

namespace studio {

// One CUDA graph (at::cuda::CUDAGraph), see train/step/step_graph.h.
class CudaGraph {
 public:
  virtual ~CudaGraph() = default;
  // Records what fn launches on the current stream (not the default one);
  // throws std::runtime_error with the reason when the capture fails.
  virtual void capture(const std::function<void()>& fn) = 0;
  virtual void replay() = 0;
};

class CudaSide {
 public:
  virtual ~CudaSide() = default;
  virtual std::unique_ptr<CudaGraph> makeGraph() = 0;
  // The calling thread's current stream on the GPU becomes a new one from
  // the pool, after the GPU finished what was queued so far.
  virtual void useSideStream(int device) = 0;
  // A GPU's name and memory in bytes, without making a context on it.
  virtual std::string deviceName(int device, double* totalBytes) = 0;
  // A NCCL process group, or null when this LibTorch has no NCCL.
  virtual c10::intrusive_ptr<c10d::Backend> makeNccl(const c10::intrusive_ptr<c10d::Store>& store, int rank, int world,
                                                     std::chrono::milliseconds timeout) = 0;
};

// The loaded plug-in, or null (no driver, STUDIO_CUDA=0, a LibTorch without
// CUDA, or the plug-in failed to load: cudaSideStatus, studio/devices.h,
// says which).
CudaSide* cudaSide();

}  // namespace studio

// The plug-in's one exported symbol.
extern "C" studio::CudaSide* studio_cuda_side();
