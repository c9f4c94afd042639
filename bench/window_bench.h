#pragma once
// What the window benchmarks share: the studio window as a person sees it
// (1600x1000, offscreen unless a display is given), a run started in it, and
// the UI thread's CPU time.
#include <QEventLoop>

#include <ctime>

#include <cstdio>
#include <cstdlib>

#include "studio/train_config.h"
#include "ui/settings/settings_panel.h"
#include "ui/window/main_window.h"

namespace bench {

inline double threadCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// Shows the window with these settings and starts the run; `loop` quits when
// it ends. Exits with the window's message when it cannot start. The caller
// then runs the application's own event loop (loop.exec(): a polling loop
// would spin a core and measure itself).
inline void startWindowRun(studio::ui::MainWindow& window, const studio::TrainConfig& c, QEventLoop& loop,
                           const char* program) {
  window.resize(1600, 1000);
  window.show();
  window.settingsPanel()->setConfig(c);
  QObject::connect(&window, &studio::ui::MainWindow::runFinished, &loop, &QEventLoop::quit);
  if (!window.startRun()) {
    std::fprintf(stderr, "%s: %s\n", program, qPrintable(window.lastMessage()));
    std::exit(1);
  }
}

}  // namespace bench
