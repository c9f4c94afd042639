#include "train/step/step_graph.h"

#include <stdexcept>

#include "cuda/cuda_side.h"

namespace studio {

// The graph itself is the CUDA plug-in's (cuda/cuda_side.h).
struct StepGraph::Impl {
  std::unique_ptr<CudaGraph> graph;
};

bool StepGraph::available() { return cudaSide() != nullptr; }

void StepGraph::useSideStream(const torch::Device& device) {
  if (CudaSide* side = cudaSide()) side->useSideStream(device.index());
}

StepGraph::StepGraph() : m_impl(std::make_unique<Impl>()) {}
StepGraph::~StepGraph() = default;

void StepGraph::capture(const std::function<void()>& fn) {
  reset();
  CudaSide* side = cudaSide();
  if (!side) throw std::runtime_error(cudaSideStatus());
  auto graph = side->makeGraph();
  graph->capture(fn);
  m_impl->graph = std::move(graph);
}

void StepGraph::replay() { m_impl->graph->replay(); }
bool StepGraph::captured() const { return m_impl->graph != nullptr; }
void StepGraph::reset() { m_impl->graph.reset(); }

}  // namespace studio
