#include "train/rank_agreement.h"

#include "dist/process_group.h"
#include "models/model.h"
#include "studio/log.h"

namespace studio {

void syncBatchNormStatistics(RunContext& ctx) {
  ProcessGroup* ranks = ctx.where.ranks;
  if (!ranks || ctx.where.syncedBatchNorm) return;  // synchronised layers keep the same statistics everywhere
  torch::NoGradGuard noGrad;
  std::vector<torch::Tensor> stats;
  for (const auto& b : ctx.parts.model->buffers())
    if (b.is_floating_point()) stats.push_back(b);
  if (stats.empty()) return;
  std::vector<torch::Tensor> flat;
  for (const auto& b : stats) flat.push_back(b.reshape(-1));
  std::vector<torch::Tensor> sum{torch::cat(flat)};
  ranks->allReduceSum(sum, "the BatchNorm statistics' average at step " + std::to_string(ctx.position.step));
  sum[0].div_(ranks->world());
  int64_t at = 0;
  for (auto& b : stats) {
    b.copy_(sum[0].slice(0, at, at + b.numel()).view(b.sizes()));
    at += b.numel();
  }
}

void agreeWithOtherRanks(RunContext& ctx) {
  ProcessGroup* ranks = ctx.where.ranks;
  if (!ranks) return;
  LoopControl& control = ctx.control;
  std::vector<torch::Tensor> flags{
      torch::tensor({control.stopRequested ? 1.0f : 0.0f, control.rollbackDue ? 1.0f : 0.0f})};
  ranks->allReduceSum(flags, "the stop check after step " + std::to_string(ctx.position.step));
  const float* f = flags[0].data_ptr<float>();
  if (f[0] > 0 && !control.stopRequested) {
    control.stopRequested = true;
    log::info(ranks->describe() + ": another rank stopped at step " + std::to_string(ctx.position.step) +
              "; stopping with it");
  }
  if (f[1] > 0) control.rollbackDue = true;
}

}  // namespace studio
