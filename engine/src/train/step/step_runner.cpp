#include "train/step/step_runner.h"

#include <ATen/ops/_amp_foreach_non_finite_check_and_unscale.h>
#include <ATen/ops/_foreach_add.h>

#include <limits>

#include "dist/grad_reducer.h"
#include "dist/process_group.h"
#include "models/autocast_scope.h"
#include "models/model.h"
#include "optim/grad_clip.h"
#include "optim/loss_scaler.h"
#include "optim/optimizer.h"
#include "train/device_info.h"
#include "train/tasks/task.h"

namespace studio {

StepMath::StepMath(RunContext& ctx) : m_ctx(ctx) {
  m_gradsBad = torch::zeros_like(ctx.skipped);
  m_unitScale = torch::ones_like(ctx.skipped);
}

torch::Tensor StepMath::forwardBackward(const std::vector<torch::Tensor>& xs, const std::vector<torch::Tensor>& ys,
                                        int64_t groupSamples) {
  RunContext& c = m_ctx;
  const bool synced = c.where.syncedBatchNorm;
  torch::Tensor lossSum;
  // Under torchrun the last backward pass of the group starts the
  // gradient exchange as it goes; a rank's share may be empty.
  // With synchronised BatchNorm every rank runs every pass, an empty one
  // too (with a loss of 0), so that their statistics' exchanges pair up.
  size_t last = xs.size();
  for (size_t i = 0; i < xs.size(); ++i)
    if (ys[i].size(0) > 0 || synced) last = i;
  for (size_t i = 0; i < xs.size(); ++i) {
    if (ys[i].size(0) == 0 && !synced) continue;
    if (c.where.reducer && i == last) c.where.reducer->arm();
    const Task& task = *c.parts.task;
    torch::Tensor logits, loss;
    {
      AutocastScope ac(c.where.device.type(), c.where.autocast, c.where.autocastDtype);
      if (task.lossInModel() && ys[i].size(0) > 0) {
        // A detector: its loss from its forward pass, the parts summed
        // over the group as the loss is (each by its share).
        torch::Tensor parts;
        loss = task.modelLoss(*c.parts.model, xs[i], ys[i], parts);
        const double w = static_cast<double>(ys[i].size(0)) / static_cast<double>(groupSamples);
        m_parts = m_parts.defined() ? m_parts + parts * w : parts * w;
      } else if (!task.lossInModel()) {
        logits = c.parts.model->forward(xs[i]);
      }
    }
    if (ys[i].size(0) == 0) {
      // An empty share: the parameters join the gradient exchange with 0
      // (a detector's through each trained parameter, having no outputs).
      torch::Tensor zero;
      if (logits.defined()) {
        zero = logits.to(torch::kFloat32).sum() * 0;
      } else {
        for (const auto& p : c.parts.model->parameters())
          if (p.requires_grad()) zero = zero.defined() ? zero + p.sum() * 0 : p.sum() * 0;
      }
      if (zero.defined()) zero.backward();
      continue;
    }
    if (!loss.defined()) loss = task.loss(logits, ys[i]);
    // Each micro-batch weighs by its share of the group's samples, so the
    // accumulated gradient is the mean over the whole group, also for a
    // short last group.
    const double share = static_cast<double>(ys[i].size(0)) / static_cast<double>(groupSamples);
    // (A whole group in one pass weighs 1: no multiplication, forward or
    // backward, in the recorded step either.)
    if (share != 1.0) loss = loss * share;
    c.parts.scaler->scale(loss).backward();
    torch::Tensor contribution = loss.detach();
    lossSum = lossSum.defined() ? lossSum + contribution : contribution;
  }
  if (!lossSum.defined())
    lossSum = torch::zeros({}, torch::TensorOptions().dtype(torch::kFloat32).device(c.where.device));
  return lossSum;
}

torch::Tensor StepMath::updateWeights(torch::Tensor meanLoss, const StepRates& rates) {
  RunContext& c = m_ctx;
  LossScaler& scaler = *c.parts.scaler;
  if (c.where.reducer) {
    // Every rank's gradients and loss, summed: each rank weighed its
    // examples by 1 / (the global group's examples), so these are the
    // global means, the same on every rank (and so are the inf check,
    // the loss scale and the clipping that follow).
    c.where.reducer->finish(c.position.step + 1);
    std::vector<torch::Tensor> loss{meanLoss.to(torch::kFloat32).reshape({1})};
    c.where.ranks->allReduceSum(loss, "the loss all-reduce of step " + std::to_string(c.position.step + 1));
    meanLoss = loss[0].reshape({});
  }
  std::vector<torch::Tensor> grads = c.parts.optimizer->grads();
  scaler.unscale(grads);
  // A step whose loss or gradients are not finite is never applied. With
  // fp16 an overflowing gradient is the loss scaler's business (it knows
  // which, and backs off); anything else is an event. Without the scaler
  // the same AMP kernel checks the gradients and the loss together, with
  // a scale of 1 (one pass over the list). All on the device.
  torch::Tensor skip, event;
  if (scaler.enabled()) {
    event = meanLoss.isfinite().logical_not().to(torch::kFloat32);
    skip = torch::maximum(scaler.foundInf(), event);
  } else {
    torch::NoGradGuard noGrad;
    m_gradsBad.zero_();
    std::vector<torch::Tensor> checked = grads;
    checked.push_back(meanLoss);
    at::_amp_foreach_non_finite_check_and_unscale_(checked, m_gradsBad, m_unitScale);
    skip = event = m_gradsBad;
  }
  torch::Tensor norm = clipGradNorm(grads, c.cfg.train.grad_clip_norm);
  if (rates.lrDevice.defined())
    c.parts.optimizer->step(rates.lrDevice, rates.momentumDevice, skip);
  else
    c.parts.optimizer->step(rates.lr, rates.momentum, skip);
  at::_foreach_add_(std::vector<torch::Tensor>{c.skipped, c.nonfinite}, std::vector<torch::Tensor>{skip, event});
  if (scaler.enabled()) scaler.update();
  torch::Tensor row = torch::stack(
      {meanLoss.to(torch::kFloat32), norm.to(c.where.device), scaler.scaleTensor(), c.skipped, c.nonfinite});
  if (c.parts.task->lossInModel()) {  // after the five figures, in Task::lossParts' order
    // A process whose shares of the step were all empty (torchrun, a short
    // last batch) has no parts of its own: NaN, as wide as the others'.
    const auto n = static_cast<int64_t>(c.parts.task->lossParts().size());
    const torch::Tensor parts =
        m_parts.defined() ? m_parts : torch::full({n}, std::numeric_limits<float>::quiet_NaN(), row.options());
    row = torch::cat({row, parts.to(row.device(), torch::kFloat32)});
    m_parts = torch::Tensor();
  }
  return row;
}

torch::Tensor EagerStep::step(const StepInput& in) {
  CudnnHeuristicsOnly heuristics(!in.full);  // cuDNN autotunes the full shape only
  Optimizer& optimizer = *m_ctx.parts.optimizer;
  if (m_keepGrads) optimizer.zeroGrad(false);
  std::vector<torch::Tensor> xs, ys;
  for (const auto& b : in.group) {
    if (m_ctx.position.microSplit > 1) {
      const int64_t part = m_ctx.microBatch();
      for (const auto& x : b.x.split(part)) xs.push_back(x);
      for (const auto& y : b.y.split(part)) ys.push_back(y);
    } else {
      xs.push_back(b.x);
      ys.push_back(b.y);
    }
  }
  torch::Tensor row = m_math.updateWeights(m_math.forwardBackward(xs, ys, in.samples), {in.lr, in.momentum, {}, {}});
  optimizer.zeroGrad(m_keepGrads ? false : m_ctx.cfg.performance.zero_grad_to_none);
  return row;
}

}  // namespace studio
