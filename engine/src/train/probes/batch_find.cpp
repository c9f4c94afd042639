// batch-find: the largest micro-batch whose training step (forward,
// backward, optimizer step) fits in the device's memory, by doubling and
// then bisection, each try a step of zero examples.
#include <ATen/DeviceAccelerator.h>
#include <c10/util/Exception.h>

#include <algorithm>

#include "models/model.h"
#include "optim/optimizer.h"
#include "studio/errors.h"
#include "studio/log.h"
#include "train/cpu_memory.h"
#include "train/device_info.h"
#include "train/probes/probe.h"
#include "train/run_commands.h"
#include "train/step/step_runner.h"

namespace studio {
namespace {

class BatchFind : public Probe {
 public:
  BatchFind(RunContext& ctx, const BatchFindOptions& options) : Probe(ctx), m_o(options) {}

  void measure(RunContext& c) override {
    const torch::Device device = c.where.device;
    // No micro-batch larger than the training examples is ever used.
    const int64_t examples = c.data.splits.train ? static_cast<int64_t>(c.data.splits.train->size()) : m_o.maxBatch;
    m_max = std::clamp<int64_t>(examples, 2, m_o.maxBatch);
    if (m_max < m_o.maxBatch)
      log::info("batch-find: tries micro-batches up to the " + std::to_string(examples) + " training examples");
    int64_t doublings = 0;
    for (int64_t n = 1; n < m_max; n *= 2) ++doublings;
    begin("off (batch-find)", doublings + 5);
    m_math = std::make_unique<StepMath>(c);
    if (device.is_cuda()) {
      const auto [free, total] = at::accelerator::getMemoryInfo(device.index());
      m_found.limitMiB = static_cast<double>(total) / (1 << 20);
    } else if (c.where.cpuMemory) {
      m_found.limitMiB = static_cast<double>(c.where.cpuMemory->limitBytes()) / (1 << 20);
    }
    const std::string where = describeDevice(device) +
                              (std::isnan(m_found.limitMiB) ? std::string() : " (" + fmt(m_found.limitMiB) + " MiB)");
    bool& stop = c.control.stopRequested;
    // Doubling: lo fits, hi does not (0: not found yet).
    int64_t lo = 0, hi = 0;
    for (int64_t n = 1; !stop; n = std::min(2 * n, m_max)) {
      if (!stepFits(n)) {
        hi = n;
        break;
      }
      lo = n;
      if (n == m_max) break;
      pollCommands(c);
    }
    // Then bisection, to within 1/16 of what fits.
    while (lo > 0 && hi > 0 && hi - lo > std::max<int64_t>(1, lo / 16) && !stop) {
      const int64_t mid = lo + (hi - lo) / 2;
      (stepFits(mid) ? lo : hi) = mid;
      pollCommands(c);
    }
    if (stop) return;
    m_found.largest = lo;
    if (lo <= 1) {
      throw InputError(std::string(lo == 0 ? "not even a micro-batch of 1" : "only a micro-batch of 1") +
                       " fits in the memory of " + where + " with " + c.parts.model->description() + ", " +
                       c.cfg.precision.mode + " and " + c.cfg.optimizer.kind +
                       ": use a smaller model, precision.mode bf16 or fp16, memory.activation_checkpointing" +
                       (c.where.cpuMemory ? ", or a higher memory.cpu_limit_mib" : ""));
    }
    // The effective batch the settings ask for, in micro-batches that fit:
    // the largest divisor of it that is at most lo.
    const int64_t effective = int64_t(c.cfg.train.batch_size) * c.cfg.train.accumulation_steps;
    int64_t micro = std::min(lo, effective);
    while (effective % micro != 0) --micro;
    m_found.micro = micro;
    m_found.accumulation = effective / micro;
    log::info("batch-find: the largest micro-batch that fits is " + std::to_string(lo) +
              (hi > 0 ? " (" + std::to_string(hi) + " does not)" : " (the most it tried)") + " on " + where +
              "; for the effective batch of " + std::to_string(effective) + ": train.batch_size " +
              std::to_string(micro) + ", train.accumulation_steps " + std::to_string(effective / micro));
  }

  void addTo(RunSummary& s) const override { s.batchFind = m_found; }

 private:
  // One training step of n zero examples; false when it ran out of memory
  // (all of it freed again).
  bool stepFits(int64_t n) {
    RunContext& c = m_ctx;
    const torch::Device device = c.where.device;
    Optimizer& optimizer = *c.parts.optimizer;
    bool fits = true;
    try {
      CudnnHeuristicsOnly heuristics;  // no autotuning of shapes the run never uses
      torch::Tensor x = sampleInput(c.data.splits.input, n, device);
      if (c.cfg.performance.channels_last && x.dim() == 4) x = x.contiguous(torch::MemoryFormat::ChannelsLast);
      // Zero targets as the task's are: a class each, or a value per target or label.
      const torch::Tensor like = c.data.splits.train->slice(0, 1).y;
      std::vector<int64_t> shape = like.sizes().vec();
      shape[0] = n;
      const torch::Tensor y = torch::zeros(shape, like.options().device(device));
      optimizer.zeroGrad(true);
      const torch::Tensor row =
          m_math->updateWeights(m_math->forwardBackward({x}, {y}, n), {c.cfg.optimizer.lr, std::nullopt, {}, {}});
      (void)row[0].item<double>();  // the step has run: a GPU reports its errors by here
    } catch (const c10::OutOfMemoryError&) {
      fits = false;
    }
    optimizer.zeroGrad(true);
    if (!fits && device.is_cuda()) at::accelerator::emptyCache();
    m_found.tried.emplace_back(n, fits);
    log::info("batch-find: a micro-batch of " + std::to_string(n) + (fits ? " fits" : " runs out of memory"));
    c.ch.step = static_cast<int64_t>(m_found.tried.size());
    return fits;
  }

  BatchFindOptions m_o;
  int64_t m_max = 0;  // the largest size tried: m_o.maxBatch or the training examples
  std::unique_ptr<StepMath> m_math;
  RunSummary::BatchFindFigures m_found;
};

}  // namespace

std::unique_ptr<Probe> makeBatchFind(RunContext& ctx, const BatchFindOptions& options) {
  return std::make_unique<BatchFind>(ctx, options);
}

}  // namespace studio
