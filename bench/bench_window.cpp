// The window's cost to training: the engine's samples/s with the studio window
// attached (live curves replotting at ~30 Hz, status bar, log dock) against the
// same run headless (a front-end that only drains the queue, as the CLI does).
// Prints both and their ratio (window / headless; the goal is >= 0.98).
// Usage: bench_window [--steps N] [--rounds R] [--device cpu|cuda] [--threads T]
// Runs offscreen unless a display is given (QT_QPA_PLATFORM).
#include <QApplication>
#include <QElapsedTimer>
#include <QEventLoop>

#include <ctime>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "studio/log.h"
#include "studio/session.h"
#include "ui/settings/settings_panel.h"
#include "ui/window/main_window.h"
#include "ui/window/run_controller.h"
#include "window_bench.h"

namespace {

constexpr int kWarmup = 20;

// samples/s over the steps after the warm-up, from the records' wall times.
double rate(const std::vector<studio::MetricRecord>& records, const studio::TrainConfig& c) {
  double tWarm = -1, tEnd = -1;
  for (const auto& r : records) {
    if (r.kind != studio::RecordKind::Train) continue;
    if (r.step == kWarmup) tWarm = r.wallSeconds;
    if (r.step == c.train.max_steps) tEnd = r.wallSeconds;
  }
  if (tWarm < 0 || tEnd <= tWarm) {
    std::fprintf(stderr, "bench_window: the run did not reach step %lld\n", static_cast<long long>(c.train.max_steps));
    std::exit(1);
  }
  return static_cast<double>((c.train.max_steps - kWarmup) * c.train.batch_size) / (tEnd - tWarm);
}

double headless(const studio::TrainConfig& c) {
  studio::Session s;
  s.start(c);
  std::vector<studio::MetricRecord> records;
  auto drain = [&] {
    studio::MetricRecord r;
    while (s.pollMetric(r)) records.push_back(r);
  };
  while (!s.wait(std::chrono::milliseconds(33))) drain();
  drain();
  return rate(records, c);
}

// The UI thread's CPU time per second of the windowed run (the whole cost of
// draining, plotting and painting), as a share of one core.
double g_uiShare = 0;

double windowed(const studio::TrainConfig& c, const QString& presetDir) {
  studio::ui::MainWindow window(presetDir, false);
  QEventLoop loop;
  bench::startWindowRun(window, c, loop, "bench_window");
  const double cpu0 = bench::threadCpuSeconds();
  QElapsedTimer wall;
  wall.start();
  loop.exec();
  g_uiShare = (bench::threadCpuSeconds() - cpu0) / (static_cast<double>(wall.nsecsElapsed()) * 1e-9);
  return rate(window.controller()->records(), c);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (!qEnvironmentVariableIsSet("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  int steps = 300, rounds = 5;
  std::string device = "auto";
  int threads = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--steps")
      steps = std::atoi(argv[i + 1]);
    else if (a == "--rounds")
      rounds = std::atoi(argv[i + 1]);
    else if (a == "--device")
      device = argv[i + 1];
    else if (a == "--threads")
      threads = std::atoi(argv[i + 1]);
  }
  studio::log::setConsoleLevel("warn");
  const QString presetDir = QString::fromStdString(studio::defaultPresetDir());
  studio::TrainConfig c = studio::loadConfigFile(studio::presetPath(presetDir.toStdString(), "fashion-mnist-cnn"));
  c.train.max_steps = kWarmup + steps;
  c.data.test_limit = 512;  // the final test, after the timed steps, on a few batches, not 10,000 images
  c.performance.device = device;
  c.performance.threads = threads;
  c.output.dir = "bench-runs";
  std::vector<double> h, w, ui;
  for (int r = 0; r < rounds; ++r) {
    // Alternate, so drift on a shared machine hits both sides alike.
    h.push_back(headless(c));
    w.push_back(windowed(c, presetDir));
    ui.push_back(g_uiShare);
    std::printf("round %d: headless %.0f samples/s, window %.0f samples/s (UI thread %.1f%% of a core)\n", r + 1,
                h.back(), w.back(), 100 * ui.back());
    std::fflush(stdout);
  }
  const double hm = median(h), wm = median(w);
  std::printf("fashion-mnist-cnn, %d timed steps after %d warm-up, batch %d, device %s, CPU threads %s\n", steps,
              kWarmup, c.train.batch_size, device.c_str(), threads > 0 ? std::to_string(threads).c_str() : "all");
  std::printf("headless: %.0f samples/s (median of %d)\n", hm, rounds);
  std::printf("window:   %.0f samples/s (median of %d)\n", wm, rounds);
  std::printf("UI thread during the windowed run: %.1f%% of one core (median)\n", 100 * median(ui));
  // Rounds alternate, so each pair ran under the same load; the median of the
  // paired ratios discounts drift that the ratio of medians keeps.
  std::vector<double> paired;
  for (size_t i = 0; i < h.size(); ++i) paired.push_back(w[i] / h[i]);
  std::printf("ratio window/headless: %.3f of the medians, %.3f median of the paired rounds (goal >= 0.98)\n", wm / hm,
              median(paired));
  return 0;
}
