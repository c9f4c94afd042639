#pragma once
// The live curves: loss (raw, smoothed, eval), accuracy, learning rate (the
// planned schedule under the actual values, with change markers), samples/s,
// memory, gradient norm, and loss scale with skipped steps. Shows one run
// (live or from disk) or several overlaid for comparison, one colour per run.
// Thread: the UI thread.

#include <QElapsedTimer>
#include <QWidget>

#include <array>
#include <vector>

#include "studio/metric_catalog.h"
#include "studio/metric_record.h"
#include "ui/charts/chart_names.h"
#include "ui/charts/divergence_watch.h"
#include "ui/charts/loss_smoother.h"
#include "ui/charts/plot_series.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;

namespace studio::ui {

class MetricChart;

// A run's records with the name it is shown under.
// How a run's steps translate into epochs and samples (0: not known; the
// x-axis in those units then leaves the run out).
struct RunShape {
  double stepsPerEpoch = 0;
  double samplesPerStep = 0;  // batch x accumulation x processes
};

struct RunCurves {
  QString key;    // unique (the run folder)
  QString label;  // for legends
  std::vector<MetricRecord> records;
  RunShape shape{};
  // A past run's own learning-rate plan (its settings and its length), drawn
  // when it is shown alone, scaled at its recorded rate changes; empty: the
  // form's plan (the live run's).
  PlotSeries plan{};
  QString planTitle{};
};

class PlotsPanel : public QWidget {
  Q_OBJECT

 public:
  enum Chart { Loss, Accuracy, LearningRate, Throughput, Memory, GradNorm, LossScale, Utilisation, ChartCount };

  explicit PlotsPanel(QWidget* parent = nullptr);

  MetricChart* chart(Chart c) const { return m_charts[c]; }
  // The learning-rate chart draws the shown past run's own plan, or no plan
  // beside several runs (the form's plan and its title then wait until a
  // live run or the form is shown again).
  bool showsOwnPlan() const { return m_ownPlan || m_runs.size() > 1; }
  std::vector<MetricChart*> charts() const { return {m_charts.begin(), m_charts.end()}; }
  static QString chartFileName(Chart c);
  // The chart a catalogue entry is drawn on (ChartCount: none).
  static Chart chartFor(studio::MetricPlot c);

  // Replaces what is shown with these runs (overlaid when several).
  void showRuns(const std::vector<RunCurves>& runs);
  // Starts showing a live run: one run, no points yet.
  void beginRun(const QString& key, const QString& label, RunShape shape = {});
  void appendRecords(const QString& key, const std::vector<MetricRecord>& records);
  // Keys of the runs shown.
  QStringList runKeys() const;

  // The learning rate the settings will produce; lr[i] is step i+1's.
  void setSchedulePreview(PlotSeries lr, RunShape shape = {});

  // The charts' x-axis: optimizer steps, epochs, samples seen, or the run's
  // wall time (the "x:" box above the charts). The planned
  // schedule has no wall time: it is left out there.
  enum XAxis { Steps, Epochs, Samples, WallTime };
  void setXAxis(XAxis x);
  // A run's shape learnt after it started (its data read): drawn again.
  void setRunShape(const QString& runKey, RunShape shape);
  // The setting that sets this run's learning rate, which a divergence
  // warning advises lowering (learningRateSetting()).
  void setRateSetting(const QString& runKey, const QString& path);
  XAxis xAxis() const { return m_xAxis; }
  void setMemoryIsGpu(bool gpu);
  // The live run's machine figures at its current step (SystemMonitor),
  // drawn in the Utilisation chart; NaN figures are left out. The note says
  // where the GPU figures come from, or why there are none.
  void addSystemSample(const QString& runKey, int64_t step, double cpuPercent, double gpuPercent,
                       double gpuMemoryPercent);
  void setSystemNote(const QString& note);

  double smoothing() const { return m_smoothing; }
  void setSmoothing(double weight);

  // Coalesced redraw of every chart.
  void refresh();
  // The redraw a live run asks for at each drain of the queue. It draws now,
  // or as soon as the charts' budget allows: after a redraw that took t, the
  // next waits at least 50 t (and 33 ms), so drawing takes at most ~2 % of the
  // UI thread however long the run and however often it records.
  void refreshLive();
  // How long the last live redraw took, and the interval it set (tests, soak).
  double lastLiveRedrawMs() const { return m_liveCostMs; }
  qint64 liveInterval() const;
  // Each chart as <dir>/<name>.png and .pdf at this size, with the caption
  // (the run's name and settings) under it; returns the files that failed.
  QStringList exportPlots(const QString& dir, const QSize& size = QSize(1200, 700), const QString& caption = QString());

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 Q_SIGNALS:
  void smoothingChanged(double weight);
  // Records arriving for this run show it diverging (DivergenceWatch): the
  // step is marked on the loss chart, and this says what happened.
  void divergenceSeen(const QString& runKey, const QString& text);

 private:
  struct RunEntry {
    QString key;
    QString label;
    int colorIndex = 0;
    LossSmoother smoother;
    DivergenceWatch watch;  // marks the step where the loss went wrong
    RunShape shape{};
    PlotSeries wall;  // x: step, y: the run's wall-clock seconds there
  };
  // A series' x at a step under the x-axis chosen (NaN: not known).
  double mapStep(const QString& seriesKey, double step) const;
  const RunEntry* runOfSeries(const QString& seriesKey) const;
  void addRunSeries(RunEntry& run, bool overlay);
  // announce: a record arriving now (a live run), whose warning is signalled.
  void appendTo(RunEntry& run, const MetricRecord& r, bool announce = false);
  void recomputeSmoothed();
  RunEntry* findRun(const QString& key);

  void showPreview();
  // From the step after `step` the live run trains at lr: the rest of the
  // planned curve is scaled to it (the schedule goes on, scaled).
  void rescalePreview(int64_t step, double lr);
  static void rescale(PlotSeries& plan, int64_t step, double lr);
  void redrawLive();
  void labelMemorySeries(RunEntry& run, bool overlay);

  std::array<MetricChart*, ChartCount> m_charts{};
  PlotSeries m_preview;       // the plan of the form's settings
  PlotSeries m_previewShown;  // the same, scaled by the live run's learning-rate changes, or a past run's own
  bool m_ownPlan = false;     // m_previewShown is the shown past run's own plan, not the form's
  QString m_formPlanTitle;    // the learning-rate chart's title for the form's plan, while a run's own is shown
  std::vector<RunEntry> m_runs;
  double m_smoothing = 0.6;
  bool m_memoryIsGpu = false;
  QDoubleSpinBox* m_smoothingBox = nullptr;
  QCheckBox* m_logLoss = nullptr;
  QCheckBox* m_link = nullptr;  // the charts zoom, pan and read out together
  QComboBox* m_xBox = nullptr;
  XAxis m_xAxis = Steps;
  RunShape m_previewShape{};
  QLabel* m_overlayNote = nullptr;
  QTimer* m_liveTimer = nullptr;  // a live redraw held back by the budget
  QElapsedTimer m_sinceLive;
  double m_liveCostMs = 0;
};

}  // namespace studio::ui
