#pragma once
// What the front-end thread and the engine thread share: two bounded
// lock-free SPSC queues (commands in, metric records out), a condition
// variable the paused engine sleeps on, and atomics for the live progress.
// Thread: each member documents its producer and consumer.

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>

#include <readerwriterqueue/readerwriterqueue.h>

#include "studio/metric_record.h"
#include "studio/session.h"

namespace studio {

struct Command {
  enum Type { Pause, Resume, Stop, SaveNow, SetLr } type = Pause;
  double value = 0;
};

struct SessionChannel {
  explicit SessionChannel(size_t metricCapacity) : metrics(metricCapacity), commands(64) {}

  // Engine -> front-end. Producer: engine (try_enqueue only: never blocks,
  // never allocates); consumer: front-end.
  moodycamel::ReaderWriterQueue<MetricRecord> metrics;
  std::atomic<int64_t> dropped{0};

  // Front-end -> engine. Producer: front-end (then notify wake); consumer: engine.
  moodycamel::ReaderWriterQueue<Command> commands;
  std::mutex wakeMutex;
  std::condition_variable wake;

  void send(const Command& c) {
    if (c.type == Command::Stop) stopAsked = true;
    commands.enqueue(c);
    std::lock_guard<std::mutex> lock(wakeMutex);
    wake.notify_all();
  }
  void post(const MetricRecord& r) {
    if (!metrics.try_enqueue(r)) dropped.fetch_add(1, std::memory_order_relaxed);
  }

  // Written by the engine, read by the front-end.
  std::atomic<SessionState> state{SessionState::Starting};
  std::atomic<int64_t> step{0}, totalSteps{0}, epoch{0};
  std::atomic<double> samplesPerSecond{0}, wallSeconds{0}, lastLoss{MetricRecord::kNone};
  std::atomic<int64_t> phaseDone{0}, phaseTotal{0};
  std::mutex textMutex;  // guards device, runDir and phase
  std::string device, runDir;
  std::string phase;  // what the engine is doing before training starts ("decoding images")
  // Set with a Stop command, so long steps before the loop (decoding) can stop.
  std::atomic<bool> stopAsked{false};
  // Checkpoints written on a SaveNow command (also while paused).
  std::atomic<int64_t> checkpointsSaved{0};
};

}  // namespace studio
