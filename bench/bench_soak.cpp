// Soak: a long run with the studio window attached (offscreen), metrics every
// step, as a person leaves a run going over lunch. Prints, each minute and at
// the end:
//  - resident memory (RSS) and its growth after the first minute (goal < 5 %):
//    the median of the last minute's samples against the median of the
//    second minute's (one sample a second; an evaluation's passing buffers
//    are not growth), and the highest sample,
//  - metric records received by the window, dropped from the queue (goal 0),
//    and the train rows in the run's metrics.csv,
//  - the UI thread's CPU time as a share of one core, each minute and over
//    the whole run from the start (goal < 5 %).
// Usage: bench_soak [--minutes M] [--threads T] [--device cpu|cuda] [--smoke]
//  --smoke: a short run for make bench-smoke: passes when every record arrived.
// Exit status 0 when every goal is met, 1 otherwise.
#include <QApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QTimer>

#if defined(STUDIO_TCMALLOC)
#include <gperftools/malloc_extension_c.h>
#else
#include <malloc.h>
#endif
#include <unistd.h>

#include <ctime>

#include <algorithm>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "studio/log.h"
#include "studio/session.h"
#include "ui/charts/plots_panel.h"
#include "ui/settings/settings_panel.h"
#include "ui/window/main_window.h"
#include "ui/window/run_controller.h"
#include "ui/window/run_status_bar.h"
#include "window_bench.h"

namespace {

double residentMiB() {
  QFile f("/proc/self/statm");
  if (!f.open(QIODevice::ReadOnly)) return 0;
  const QList<QByteArray> fields = f.readAll().split(' ');
  if (fields.size() < 2) return 0;
  return fields[1].toDouble() * static_cast<double>(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

// The C heap: bytes in use by the program, and bytes free but kept (glibc's
// arenas, tcmalloc's page heap and caches; not returned to the system): RSS
// that grows while the first stays flat is kept memory, not a leak.
std::pair<double, double> heapMiB() {
  constexpr double kMiB = 1024.0 * 1024.0;
#if defined(STUDIO_TCMALLOC)
  size_t used = 0, heap = 0, unmapped = 0;
  MallocExtension_GetNumericProperty("generic.current_allocated_bytes", &used);
  MallocExtension_GetNumericProperty("generic.heap_size", &heap);
  MallocExtension_GetNumericProperty("tcmalloc.pageheap_unmapped_bytes", &unmapped);
  const size_t kept = heap > used + unmapped ? heap - used - unmapped : 0;
  return {static_cast<double>(used) / kMiB, static_cast<double>(kept) / kMiB};
#else
  const struct mallinfo2 m = mallinfo2();
  return {static_cast<double>(m.uordblks + m.hblkhd) / kMiB, static_cast<double>(m.fordblks) / kMiB};
#endif
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int64_t trainRowsInCsv(const QString& runDir) {
  QFile f(runDir + "/metrics.csv");
  if (!f.open(QIODevice::ReadOnly)) return -1;
  int64_t rows = 0;
  const QByteArray header = f.readLine();
  const int kindColumn = static_cast<int>(header.trimmed().split(',').indexOf("kind"));
  while (!f.atEnd()) {
    const QList<QByteArray> cells = f.readLine().trimmed().split(',');
    if (kindColumn >= 0 && kindColumn < cells.size() && cells[kindColumn] == "train") ++rows;
  }
  return rows;
}

}  // namespace

int main(int argc, char** argv) {
  if (!qEnvironmentVariableIsSet("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  double minutes = 30;
  bool smoke = false;  // --smoke: a short run for make bench-smoke; its figures are no measurement
  int threads = 0;
  std::string device = "auto";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool hasValue = i + 1 < argc;
    if (a == "--smoke")
      smoke = true;
    else if (a == "--minutes" && hasValue)
      minutes = std::atof(argv[++i]);
    else if (a == "--threads" && hasValue)
      threads = std::atoi(argv[++i]);
    else if (a == "--device" && hasValue)
      device = argv[++i];
  }
  studio::log::setConsoleLevel("warn");
  const QString presetDir = QString::fromStdString(studio::defaultPresetDir());
  studio::TrainConfig c = studio::loadConfigFile(studio::presetPath(presetDir.toStdString(), "fashion-mnist-cnn"));
  c.train.epochs = 100000;  // stopped by the clock, not the plan
  c.train.log_every_steps = 1;
  c.performance.device = device;
  c.performance.threads = threads;
  c.output.dir = "bench-runs";

  studio::ui::MainWindow window(presetDir, false);
  QEventLoop loop;
  bench::startWindowRun(window, c, loop, "bench_soak");
  studio::ui::RunController* run = window.controller();
  const double cpu0 = bench::threadCpuSeconds();
  QElapsedTimer wall;
  wall.start();
  std::vector<double> secondMinute, lastMinute;  // RSS samples
  double rssMax = 0, rssLast = 0;
  int minute = 0;
  double cpuAtMinute = cpu0;
  QTimer sampler;
  sampler.setInterval(1000);
  QObject::connect(&sampler, &QTimer::timeout, [&] {
    const double t = static_cast<double>(wall.elapsed()) / 1000.0;
    rssLast = residentMiB();
    if (t >= 60) rssMax = std::max(rssMax, rssLast);
    if (t >= 60 && t < 120) secondMinute.push_back(rssLast);
    lastMinute.push_back(rssLast);
    if (lastMinute.size() > 60) lastMinute.erase(lastMinute.begin());
    if (t >= 60.0 * (minute + 1)) {
      ++minute;
      const double cpuNow = bench::threadCpuSeconds();
      const double ui = (cpuNow - cpuAtMinute) / 60.0;  // this minute's share
      cpuAtMinute = cpuNow;
      const auto [heapUsed, heapFree] = heapMiB();
      std::printf(
          "minute %d: step %lld, RSS %.1f MiB (median of the minute; heap %.1f MiB in use, %.1f MiB free), "
          "records %lld received / %lld dropped, "
          "UI thread %.2f%% of a core in the minute, last redraw %.1f ms (every %lld ms)\n",
          minute, static_cast<long long>(run->progress().step), median(lastMinute), heapUsed, heapFree,
          static_cast<long long>(run->receivedRecords()), static_cast<long long>(run->droppedRecords()), 100 * ui,
          window.plotsPanel()->lastLiveRedrawMs(), static_cast<long long>(window.plotsPanel()->liveInterval()));
      std::fflush(stdout);
    }
    if (t >= minutes * 60) run->stop();
  });
  sampler.start();
  loop.exec();
  sampler.stop();
  const double seconds = static_cast<double>(wall.elapsed()) / 1000.0;
  const double uiShare = (bench::threadCpuSeconds() - cpu0) / seconds;
  run->poll();
  int64_t trainReceived = 0;
  for (const auto& r : run->records())
    if (r.kind == studio::RecordKind::Train) ++trainReceived;
  const int64_t csvRows = trainRowsInCsv(run->runDir());
  const double rssSecond = median(secondMinute), rssEnd = median(lastMinute);
  const double growth = rssSecond > 0 ? (rssEnd - rssSecond) / rssSecond : 0;

  std::printf("\nfashion-mnist-cnn, metrics every step, %.1f minutes, device %s, CPU threads %s\n", seconds / 60,
              run->progress().device.c_str(), threads > 0 ? std::to_string(threads).c_str() : "all");
  std::printf("steps: %lld\n", static_cast<long long>(run->progress().step));
  std::printf(
      "RSS (medians): %.1f MiB in the second minute, %.1f MiB in the last: growth %.2f%% (goal < 5%%); "
      "highest sample after the first minute %.1f MiB\n",
      rssSecond, rssEnd, 100 * growth, rssMax);
  std::printf("records: %lld received by the window (%lld train), %lld dropped (goal 0); metrics.csv train rows %lld\n",
              static_cast<long long>(run->receivedRecords()), static_cast<long long>(trainReceived),
              static_cast<long long>(run->droppedRecords()), static_cast<long long>(csvRows));
  std::printf("status bar: \"%s\"\n", qPrintable(window.runStatusBar()->recordsText()));
  std::printf("UI thread: %.2f%% of one core (goal < 5%%)\n", 100 * uiShare);
  const bool ok =
      rssSecond > 0 && growth < 0.05 && run->droppedRecords() == 0 && trainReceived == csvRows && uiShare < 0.05;
  std::printf("%s\n", ok ? "every goal met" : "a goal was missed");
  if (smoke) {
    // Too short for the memory and CPU goals: only that every record arrived.
    const bool ran = run->droppedRecords() == 0 && trainReceived == csvRows && trainReceived > 0;
    std::printf("smoke: %s\n", ran ? "every record arrived" : "records were lost");
    return ran ? 0 : 1;
  }
  return ok ? 0 : 1;
}
