#include "train/metric_window.h"

#include "optim/loss_scaler.h"
#include "run/run_recorder.h"
#include "train/callbacks/train_callback.h"
#include "train/device_info.h"

namespace studio {

void MetricWindow::add(torch::Tensor figures, const PendingStep& step) {
  m_figures.push_back(std::move(figures));
  m_steps.push_back(step);
}

void MetricWindow::flush() {
  if (m_steps.empty()) return;
  RunContext& c = m_ctx;
  torch::Tensor rows = torch::stack(m_figures).to(torch::kCPU, torch::kFloat64);
  const double seconds = std::chrono::duration<double>(Clock::now() - m_start).count();
  int64_t samples = 0;
  for (const auto& p : m_steps) samples += p.samples;
  c.times.train += seconds;
  c.times.trainSamples += samples;
  const double sps = seconds > 0 ? static_cast<double>(samples) / seconds : MetricRecord::kNone;
  const MemoryFigures mem = memoryFigures(c.where.device);
  const bool scaled = c.parts.scaler->enabled();
  auto acc = rows.accessor<double, 2>();
  for (size_t i = 0; i < m_steps.size(); ++i) {
    MetricRecord r;
    r.kind = RecordKind::Train;
    r.step = m_steps[i].step;
    r.epoch = m_steps[i].epoch;
    r.wallSeconds = c.wallSeconds();
    r.trainLoss = acc[i][0];
    r.lr = m_steps[i].lr;
    r.gradNorm = acc[i][1];
    if (scaled) r.lossScale = acc[i][2];
    r.skippedSteps = static_cast<int64_t>(acc[i][3]);
    r.samplesPerSecond = sps;
    r.stepMillis = 1000.0 * seconds / static_cast<double>(m_steps.size());
    r.memAllocatedMiB = mem.allocatedMiB;
    r.memReservedMiB = mem.reservedMiB;
    r.memPeakMiB = mem.peakMiB;
    r.microBatch = m_steps[i].microBatch;
    if (rows.size(1) >= 9) {  // a detector's loss parts (Task::lossParts)
      r.lossClassifier = acc[i][5];
      r.lossBoxReg = acc[i][6];
      r.lossObjectness = acc[i][7];
      r.lossRpnBoxReg = acc[i][8];
    }
    c.post(r);
    c.lastTrainLoss = r.trainLoss;
    c.callbacks->onTrainRecord(c, r, static_cast<int64_t>(acc[i][4]));
  }
  c.ch.samplesPerSecond = sps;
  c.ch.wallSeconds = c.wallSeconds();
  c.ch.lastLoss = c.lastTrainLoss;
  m_steps.clear();
  m_figures.clear();
  if (c.recorder) c.recorder->flushIfDue();
  m_start = Clock::now();
  c.callbacks->onFlushed(c);  // counted as training time
}

}  // namespace studio
