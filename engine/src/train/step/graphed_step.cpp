#include "train/step/graphed_step.h"

#include "cuda/cuda_side.h"
#include "optim/optimizer.h"
#include "studio/devices.h"
#include "studio/log.h"
#include "studio/lr_schedule.h"
#include "train/tasks/task.h"

namespace studio {

std::string graphsUnavailable(const RunContext& ctx) {
  if (!ctx.where.device.is_cuda()) return "the run is on the CPU";
  if (!StepGraph::available()) return cudaSideStatus();
  if (ctx.parts.task->lossInModel()) return "a detector's images keep their own sizes (each step's shapes differ)";
  if (ctx.cfg.memory.activation_checkpointing != ActivationCheckpointing::off)
    return "activation checkpointing recomputes in the backward pass";
  if (ctx.position.microSplit > 1) return "the micro-batch was split after running out of memory";
  if (ctx.where.ranks) return "the run has several processes (gradients are exchanged between them)";
  if (ctx.cfg.train.finetune.freeze_epochs > 0)
    return "train.finetune.freeze_epochs unfreezes layers during the run (the recorded step's gradients would change)";
  return ctx.parts.optimizer->notCapturable(ctx.parts.schedule->cyclesMomentum());
}

GraphedStep::GraphedStep(RunContext& ctx, StepMath& math, EagerStep& eager) : m_ctx(ctx), m_math(math), m_eager(eager) {
  const torch::Device device = ctx.where.device;
  StepGraph::useSideStream(device);
  const auto f32 = torch::TensorOptions().dtype(torch::kFloat32).device(device);
  m_lr = torch::zeros({}, f32);
  if (ctx.parts.schedule->cyclesMomentum()) m_momentum = torch::zeros({}, f32);
}

torch::Tensor GraphedStep::step(const StepInput& in) {
  if (!m_graph.captured()) {
    if (m_warmupDone < kWarmup) {
      ++m_warmupDone;
      return m_eager.step(in);
    }
    m_staticX.clear();
    m_staticY.clear();
    for (const auto& b : in.group) {
      m_staticX.push_back(b.x.clone());
      m_staticY.push_back(b.y.clone());
    }
    Optimizer& optimizer = *m_ctx.parts.optimizer;
    optimizer.zeroGrad(true);  // the recorded backward writes fresh gradients
    try {
      m_graph.capture([&] {
        m_row = m_math.updateWeights(m_math.forwardBackward(m_staticX, m_staticY, in.samples),
                                     {in.lr, in.momentum, m_lr, m_momentum});
      });
    } catch (const std::runtime_error& e) {
      const std::string why = std::string("recording the step failed: ") + e.what();
      if (m_ctx.cfg.performance.cuda_graphs == CudaGraphs::on)
        throw std::runtime_error("performance.cuda_graphs is on, but " + why + "; set it to auto or off");
      log::warn("CUDA graphs off: " + why);
      graphsOff("off: " + why);
      m_staticX.clear();
      m_staticY.clear();
      m_row.reset();
      optimizer.zeroGrad(true);
      return m_eager.step(in);
    }
    m_eager.keepGradBuffers();
    const std::string at = std::to_string(m_ctx.position.step + 1);
    m_status = "on (recorded at step " + at + ")";
    log::info("CUDA graphs: the whole step is recorded at step " + at + " and replayed from now on");
  } else {
    for (size_t i = 0; i < in.group.size(); ++i) {
      m_staticX[i].copy_(in.group[i].x, /*non_blocking=*/true);
      m_staticY[i].copy_(in.group[i].y, /*non_blocking=*/true);
    }
  }
  // After a capture too: recording runs nothing, the replay reads these.
  m_lr.fill_(in.lr);
  if (m_momentum.defined()) m_momentum.fill_(in.momentum.value_or(0.0));
  m_graph.replay();
  return m_row.clone();
}

}  // namespace studio
