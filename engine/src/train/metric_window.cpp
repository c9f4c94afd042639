#include "train/metric_window.h"

#include <stdexcept>

#include "optim/loss_scaler.h"
#include "run/run_recorder.h"
#include "studio/metric_catalog.h"
#include "train/callbacks/train_callback.h"
#include "train/device_info.h"
#include "train/tasks/task.h"

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
  std::vector<const MetricSpec*> parts;
  for (const std::string& id : c.parts.task->lossParts()) {
    parts.push_back(findMetric(id));
    if (!parts.back() || !parts.back()->real)
      throw std::logic_error("loss part " + id + " is no metric of the catalog");
  }
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
    // A detector's loss parts, after the five figures, each into the
    // record's field its metric names (Task::lossParts' ids are the catalog's).
    for (size_t k = 0; k < parts.size(); ++k) r.*(parts[k]->real) = acc[i][static_cast<int64_t>(5 + k)];
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
