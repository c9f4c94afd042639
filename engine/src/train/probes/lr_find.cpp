// The learning-rate range test: exponentially growing rates, one optimizer
// step each (accumulation included), the loss read every step (a sync per
// step is the price of stopping on divergence), smoothed as fastai does.
#include <cmath>
#include <limits>

#include "data/batch_loader.h"
#include "studio/log.h"
#include "train/metric_window.h"
#include "train/probes/probe.h"
#include "train/run_commands.h"
#include "train/step/step_runner.h"
#include "train/train_loop.h"

namespace studio {
namespace {

// The suggested rate: the steepest fall of the smoothed loss against
// log(lr), before its lowest point; the first tenth of the sweep (at least 5
// steps) is left out, as fastai's plot does: the average has not settled
// there. Without a fall, a tenth of the rate at the lowest loss.
struct Suggestion {
  double lr = MetricRecord::kNone, lowestLossLr = MetricRecord::kNone;
};

Suggestion suggest(const std::vector<double>& lrs, const std::vector<double>& smoothed, int64_t steps) {
  Suggestion out;
  const size_t skip = std::max<size_t>(5, static_cast<size_t>(steps / 10));
  if (smoothed.size() < skip + 3) return out;
  size_t lowest = skip;
  for (size_t i = skip; i < smoothed.size(); ++i)
    if (smoothed[i] < smoothed[lowest]) lowest = i;
  out.lowestLossLr = lrs[lowest];
  double steepest = 0;
  for (size_t i = skip + 1; i <= lowest; ++i) {
    const double slope = (smoothed[i] - smoothed[i - 1]) / (std::log(lrs[i]) - std::log(lrs[i - 1]));
    if (slope < steepest) {
      steepest = slope;
      out.lr = lrs[i];
    }
  }
  if (!std::isfinite(out.lr)) out.lr = out.lowestLossLr / 10;
  return out;
}

class LrFind : public Probe {
 public:
  LrFind(RunContext& ctx, const LrFindOptions& options) : Probe(ctx), m_o(options) {}

  void measure(RunContext& c) override {
    RunPosition& at = c.position;
    LoopControl& control = c.control;
    const int64_t nb = c.data.loader->batchesPerEpoch();
    c.steps.totalSteps = m_o.steps;
    begin("off (learning-rate range test)", m_o.steps);
    std::vector<double> lrs, smoothed;
    double avg = 0, best = std::numeric_limits<double>::infinity();
    m_end = "swept " + fmt(m_o.lrMin) + " to " + fmt(m_o.lrMax) + " in " + std::to_string(m_o.steps) + " steps";
    bool stoppedByPerson = false;
    c.window->restart();
    while (at.step < m_o.steps && !control.stopRequested) {
      c.data.loader->startEpoch(at.epoch, at.batchInEpoch);
      while (at.batchInEpoch < nb && at.step < m_o.steps && !control.stopRequested) {
        int64_t samples = 0;
        bool full = false;
        const std::vector<Batch> group = nextGroup(c, samples, full);
        const double t = static_cast<double>(at.step) / static_cast<double>(m_o.steps - 1);
        const double lr = m_o.lrMin * std::pow(m_o.lrMax / m_o.lrMin, t);
        c.window->add(c.stepper->step({group, samples, lr, std::nullopt, full}),
                      {at.step + 1, at.epoch, lr, samples, c.microBatch()});
        ++at.step;
        c.ch.step = at.step;
        const double loss = c.window->last()[0].item<double>();
        c.window->flush();
        const bool epochDone = closeEpochIfDone(c);
        if (!std::isfinite(loss) || control.divergedAt) {
          m_end = "the loss or the gradients are not finite at learning rate " + fmt(lr);
          control.stopRequested = true;
          break;
        }
        pollCommands(c);
        if (c.ch.stopAsked) {
          m_end = "stopped";
          stoppedByPerson = true;
          break;
        }
        avg = m_o.beta * avg + (1 - m_o.beta) * loss;
        const double s = avg / (1 - std::pow(m_o.beta, static_cast<double>(lrs.size() + 1)));
        lrs.push_back(lr);
        smoothed.push_back(s);
        best = std::min(best, s);
        if (s > m_o.divergeFactor * best) {
          m_end = "the smoothed loss " + fmt(s) + " passed " + fmt(m_o.divergeFactor) + " times its lowest (" +
                  fmt(best) + ") at learning rate " + fmt(lr);
          control.stopRequested = true;
        }
        if (epochDone) break;  // the loader starts the next epoch
      }
    }
    c.window->flush();
    control.stopRequested = stoppedByPerson;  // the run's status: stopped only by the person
    m_found = suggest(lrs, smoothed, m_o.steps);
    log::info("learning-rate range test: " + m_end + "; suggested " + fmt(m_found.lr) +
              " (steepest fall of the smoothed loss), lowest loss at " + fmt(m_found.lowestLossLr));
    m_done = true;
  }

  void addTo(RunSummary& s) const override {
    if (!m_done) return;
    s.lrFind.suggestion = m_found.lr;
    s.lrFind.minimum = m_found.lowestLossLr;
    s.lrFind.end = m_end;
  }

 private:
  LrFindOptions m_o;
  Suggestion m_found;
  std::string m_end;
  bool m_done = false;
};

}  // namespace

std::unique_ptr<Probe> makeLrFind(RunContext& ctx, const LrFindOptions& options) {
  return std::make_unique<LrFind>(ctx, options);
}

}  // namespace studio
