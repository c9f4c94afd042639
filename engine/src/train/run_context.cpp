#include "train/run_context.h"

#include <cstdio>
#include <exception>

#include "data/batch_loader.h"
#include "dist/grad_reducer.h"
#include "dist/process_group.h"
#include "models/model.h"
#include "optim/loss_scaler.h"
#include "optim/optimizer.h"
#include "run/checkpoint.h"
#include "run/run_recorder.h"
#include "train/callbacks/train_callback.h"
#include "train/checkpoints.h"
#include "train/cpu_memory.h"
#include "train/evaluation.h"
#include "train/metric_window.h"
#include "train/step/step_runner.h"
#include "train/tasks/task.h"

namespace studio {

std::string fmt(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

RunContext::RunContext(TrainConfig config, std::string dir, RunStart how, StartOptions opts, SessionChannel& channel)
    : cfg(std::move(config)), runDir(std::move(dir)), start(std::move(how)), options(opts), ch(channel) {
  if (const auto* fork = start.as<run_start::Fork>()) lineage.parent = fork->parent;
}

RunContext::~RunContext() = default;

double RunContext::wallSeconds() const {
  return times.wallAtStart + std::chrono::duration<double>(Clock::now() - times.started).count();
}

double RunContext::lrAt(int64_t step) const { return parts.schedule->lr(step) * lr.multiplier; }

MetricRecord RunContext::record(RecordKind kind) const {
  MetricRecord r;
  r.kind = kind;
  r.step = position.step;
  r.epoch = position.epoch;
  r.wallSeconds = wallSeconds();
  return r;
}

void RunContext::post(const MetricRecord& r) {
  if (recorder) recorder->append(r);
  ch.post(r);
}

void RunContext::setPhase(const std::string& phase, int64_t done, int64_t total) {
  {
    std::lock_guard<std::mutex> lock(ch.textMutex);
    ch.phase = phase;
  }
  ch.phaseDone = done;
  ch.phaseTotal = total;
}

int64_t RunContext::microBatch() const {
  const int64_t b = cfg.train.batch_size, k = position.microSplit;
  return (b + k - 1) / k;
}

TrainConfig RunContext::globalBatchConfig() const {
  TrainConfig c = cfg;
  if (where.ranks) c.train.batch_size *= where.ranks->world();
  return c;
}

int64_t RunContext::world() const { return where.ranks ? where.ranks->world() : 1; }

void RunContext::showPosition() {
  ch.step = position.step;
  ch.epoch = position.epoch;
}

CheckpointParts RunContext::checkpointParts(CheckpointState& state) {
  return CheckpointParts{*parts.model, *parts.optimizer, *parts.scaler, skipped, state, nullptr};
}

ActivityScope::ActivityScope(RunContext& ctx, RunActivity what)
    : m_slot(ctx.activity), m_before(ctx.activity), m_exceptions(std::uncaught_exceptions()) {
  m_slot = what;
}

ActivityScope::~ActivityScope() {
  if (std::uncaught_exceptions() == m_exceptions) m_slot = m_before;
}

}  // namespace studio
