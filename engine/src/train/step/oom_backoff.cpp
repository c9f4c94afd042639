#include "train/step/oom_backoff.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/DeviceAccelerator.h>
#include <c10/util/Exception.h>

#include "models/model.h"
#include "optim/optimizer.h"
#include "studio/log.h"
#include "train/device_info.h"

namespace studio {

std::unique_ptr<StepRunner> makeStepRunner(RunContext& ctx) {
  auto math = std::make_unique<StepMath>(ctx);
  const auto& want = ctx.cfg.performance.cuda_graphs;
  std::string status, why;
  if (want == CudaGraphs::off) {
    status = "off (performance.cuda_graphs off)";
  } else if (why = graphsUnavailable(ctx); !why.empty()) {
    if (want == CudaGraphs::on)
      throw std::invalid_argument("performance.cuda_graphs is on, but " + why + "; set it to auto or off");
    status = "off: " + why;
    if (ctx.where.device.is_cuda()) log::info("CUDA graphs off: " + why);
  }
  auto eager = std::make_unique<EagerStep>(ctx, *math, status);
  std::unique_ptr<GraphedStep> graphed;
  if (status.empty()) graphed = std::make_unique<GraphedStep>(ctx, *math, *eager);
  return std::make_unique<OomBackoff>(ctx, std::move(math), std::move(eager), std::move(graphed));
}

OomBackoff::OomBackoff(RunContext& ctx, std::unique_ptr<StepMath> math, std::unique_ptr<EagerStep> eager,
                       std::unique_ptr<GraphedStep> graphed)
    : m_ctx(ctx), m_math(std::move(math)), m_eager(std::move(eager)), m_graphed(std::move(graphed)) {}

OomBackoff::~OomBackoff() = default;

std::string OomBackoff::graphStatus() const { return m_graphed ? m_graphed->graphStatus() : m_eager->graphStatus(); }

void OomBackoff::graphsOff(const std::string& status) {
  if (m_graphed) m_graphed->graphsOff(status);
  m_eager->graphsOff(status);
}

torch::Tensor OomBackoff::step(const StepInput& in) {
  RunContext& c = m_ctx;
  const torch::Device device = c.where.device;
  Model& model = *c.parts.model;
  while (true) {
    std::vector<torch::Tensor> kept;
    torch::Tensor cpuRng, deviceRng;
    if (c.cfg.memory.oom_backoff && !m_sizeProven) {
      torch::NoGradGuard noGrad;
      for (const auto& b : model.buffers()) kept.push_back(b.clone());
      cpuRng = at::detail::getDefaultCPUGenerator().get_state();
      if (device.is_cuda()) deviceRng = at::globalContext().defaultGenerator(device).get_state();
    }
    try {
      torch::Tensor row = m_graphed && m_graphed->on() && in.full ? m_graphed->step(in) : m_eager->step(in);
      m_sizeProven = true;
      return row;
    } catch (const c10::OutOfMemoryError& e) {
      const int64_t micro = c.microBatch();
      // Under torchrun the other ranks are already exchanging this step's
      // gradients: the run fails with the usual advice instead.
      if (!c.cfg.memory.oom_backoff || micro <= 1 || recorded() || c.where.ranks) throw;
      // What the failed try left: its gradients, on a GPU the cached
      // blocks, and (when kept) its BatchNorm statistics and random draws.
      c.parts.optimizer->zeroGrad(true);
      if (!kept.empty() || cpuRng.defined()) {
        torch::NoGradGuard noGrad;
        const auto now = model.buffers();
        for (size_t i = 0; i < kept.size(); ++i) now[i].copy_(kept[i]);
        at::Generator cpuGen = at::detail::getDefaultCPUGenerator();
        cpuGen.set_state(cpuRng);
        if (deviceRng.defined()) {
          at::Generator deviceGen = at::globalContext().defaultGenerator(device);
          deviceGen.set_state(deviceRng);
        }
      }
      if (m_graphed && m_graphed->on())  // a recording that ran out of memory is not used
        m_graphed->graphsOff("off: out of memory while recording the step");
      if (device.is_cuda()) at::accelerator::emptyCache();
      c.position.microSplit *= 2;
      const int64_t now = c.microBatch();
      MetricRecord r = c.record(RecordKind::OomBackoff);
      r.step = c.position.step + 1;
      r.microBatch = now;
      c.post(r);
      log::warn("step " + std::to_string(c.position.step + 1) + " ran out of memory on " + describeDevice(device) +
                " with micro-batches of " + std::to_string(micro) + " (" + e.what_without_backtrace() +
                "); going on with micro-batches of " + std::to_string(now) + ", " +
                std::to_string(c.cfg.train.accumulation_steps * c.position.microSplit) +
                " per optimizer step (the same effective batch; memory.oom_backoff)");
    }
  }
}

}  // namespace studio
