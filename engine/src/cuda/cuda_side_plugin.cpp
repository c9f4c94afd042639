// libstudio_cuda.so: the engine's CUDA-only code (cuda/cuda_side.h), built
// against LibTorch's CUDA half and loaded when the process starts.
#include "cuda/cuda_side.h"

#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/Exception.h>
#include <cuda_runtime_api.h>
#ifdef STUDIO_WITH_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include <optional>
#include <stdexcept>

namespace studio {

namespace {

class Graph final : public CudaGraph {
 public:
  void capture(const std::function<void()>& fn) override {
    const c10::cuda::CUDAStream stream = c10::cuda::getCurrentCUDAStream();
    if (stream == c10::cuda::getDefaultCUDAStream(stream.device_index()))
      throw std::logic_error("StepGraph::capture on the default stream (call useSideStream first)");
    stream.synchronize();
    m_graph.emplace();
    // Thread-local: the autograd engine's device thread and the loader's
    // workers may make CUDA calls of their own while this thread captures.
    m_graph->capture_begin({0, 0}, cudaStreamCaptureModeThreadLocal);
    try {
      fn();
    } catch (const std::exception& e) {
      std::string why = e.what();
      if (const auto* c = dynamic_cast<const c10::Error*>(&e)) why = c->what_without_backtrace();
      try {
        m_graph->capture_end();  // ends the stream's capture; throws for the broken graph
      } catch (const std::exception&) {
      }
      m_graph.reset();
      (void)cudaGetLastError();  // the capture's error is not the next call's
      throw std::runtime_error(why);
    }
    try {
      m_graph->capture_end();
    } catch (const c10::Error& e) {
      m_graph.reset();
      (void)cudaGetLastError();
      throw std::runtime_error(e.what_without_backtrace());
    }
    stream.synchronize();
  }

  void replay() override { m_graph->replay(); }

 private:
  std::optional<at::cuda::CUDAGraph> m_graph;
};

class Side final : public CudaSide {
 public:
  std::unique_ptr<CudaGraph> makeGraph() override { return std::make_unique<Graph>(); }

  void useSideStream(int device) override {
    const auto index = static_cast<c10::DeviceIndex>(device);
    const c10::cuda::CUDAStream current = c10::cuda::getCurrentCUDAStream(index);
    current.synchronize();  // once: what was queued (the data's copy) is done
    c10::cuda::setCurrentCUDAStream(c10::cuda::getStreamFromPool(false, index));
  }

  std::string deviceName(int device, double* totalBytes) override {
    const cudaDeviceProp* p = at::cuda::getDeviceProperties(static_cast<c10::DeviceIndex>(device));
    *totalBytes = static_cast<double>(p->totalGlobalMem);
    return p->name;
  }

  c10::intrusive_ptr<c10d::Backend> makeNccl(const c10::intrusive_ptr<c10d::Store>& store, int rank, int world,
                                             std::chrono::milliseconds timeout) override {
#ifdef STUDIO_WITH_NCCL
    auto options = c10d::ProcessGroupNCCL::Options::create();
    options->timeout = timeout;
    return c10::make_intrusive<c10d::ProcessGroupNCCL>(store, rank, world, options);
#else
    return {};
#endif
  }
};

}  // namespace

}  // namespace studio

extern "C" studio::CudaSide* studio_cuda_side() {
  static studio::Side side;
  return &side;
}
