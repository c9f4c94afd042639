#include "train/step/step_graph.h"

#include <stdexcept>

#if STUDIO_WITH_CUDA
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/Exception.h>
#include <cuda_runtime_api.h>
#include <optional>
#endif

namespace studio {

#if STUDIO_WITH_CUDA

struct StepGraph::Impl {
  std::optional<at::cuda::CUDAGraph> graph;
};

bool StepGraph::available() { return true; }

void StepGraph::useSideStream(const torch::Device& device) {
  const c10::cuda::CUDAStream current = c10::cuda::getCurrentCUDAStream(device.index());
  current.synchronize();  // once: what was queued (the data's copy) is done
  c10::cuda::setCurrentCUDAStream(c10::cuda::getStreamFromPool(false, device.index()));
}

StepGraph::StepGraph() : m_impl(std::make_unique<Impl>()) {}
StepGraph::~StepGraph() = default;

void StepGraph::capture(const std::function<void()>& fn) {
  reset();
  const c10::cuda::CUDAStream stream = c10::cuda::getCurrentCUDAStream();
  if (stream == c10::cuda::getDefaultCUDAStream(stream.device_index()))
    throw std::logic_error("StepGraph::capture on the default stream (call useSideStream first)");
  stream.synchronize();
  m_impl->graph.emplace();
  // Thread-local: the autograd engine's device thread and the loader's
  // workers may make CUDA calls of their own while this thread captures.
  m_impl->graph->capture_begin({0, 0}, cudaStreamCaptureModeThreadLocal);
  try {
    fn();
  } catch (const std::exception& e) {
    std::string why = e.what();
    if (const auto* c = dynamic_cast<const c10::Error*>(&e)) why = c->what_without_backtrace();
    try {
      m_impl->graph->capture_end();  // ends the stream's capture; throws for the broken graph
    } catch (const std::exception&) {
    }
    m_impl->graph.reset();
    (void)cudaGetLastError();  // the capture's error is not the next call's
    throw std::runtime_error(why);
  }
  try {
    m_impl->graph->capture_end();
  } catch (const c10::Error& e) {
    m_impl->graph.reset();
    (void)cudaGetLastError();
    throw std::runtime_error(e.what_without_backtrace());
  }
  stream.synchronize();
}

void StepGraph::replay() { m_impl->graph->replay(); }
bool StepGraph::captured() const { return m_impl->graph.has_value(); }
void StepGraph::reset() { m_impl->graph.reset(); }

#else  // a LibTorch without CUDA

struct StepGraph::Impl {};
bool StepGraph::available() { return false; }
void StepGraph::useSideStream(const torch::Device&) {}
StepGraph::StepGraph() : m_impl(std::make_unique<Impl>()) {}
StepGraph::~StepGraph() = default;
void StepGraph::capture(const std::function<void()>&) {
  throw std::runtime_error("this LibTorch was built without CUDA");
}
void StepGraph::replay() {}
bool StepGraph::captured() const { return false; }
void StepGraph::reset() {}

#endif

}  // namespace studio
