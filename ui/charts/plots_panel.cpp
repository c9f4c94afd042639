#include "ui/charts/plots_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QSlider>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>

#include "studio/metric_catalog.h"
#include "ui/charts/metric_chart.h"
#include "ui/charts/plot_palette.h"

namespace studio::ui {

namespace {

QString key(const QString& run, const char* metric) { return run + "/" + metric; }

// Lines are one pixel wide: wider pens take QPainter's stroker, about 25x
// slower on long runs (bench_replot: 17 ms against 430 ms for 3 x 1M points).
MetricChart::SeriesStyle seriesStyle(QColor c, Qt::PenStyle pen = Qt::SolidLine, double width = 1.0, bool dots = false,
                                     bool right = false) {
  MetricChart::SeriesStyle s;
  s.pen = QPen(c, width, pen);
  s.dots = dots;
  s.rightAxis = right;
  return s;
}

QColor faded(QColor c) {
  c.setAlpha(90);
  return c;
}

}  // namespace

PlotsPanel::PlotsPanel(QWidget* parent) : QWidget(parent) {
  auto* top = new QVBoxLayout(this);
  top->setContentsMargins(4, 4, 4, 4);

  auto* bar = new QHBoxLayout;
  bar->addWidget(new QLabel(tr("Loss smoothing:")));
  m_smoothingBox = new QDoubleSpinBox;
  m_smoothingBox->setObjectName("smoothing");
  m_smoothingBox->setRange(0.0, 0.999);
  m_smoothingBox->setDecimals(3);
  m_smoothingBox->setSingleStep(0.05);
  m_smoothingBox->setValue(m_smoothing);
  m_smoothingBox->setFocusPolicy(Qt::ClickFocus);  // the window opens without a field selected
  m_smoothingBox->setToolTip(
      tr("Weight of the exponential moving average drawn over the raw training loss "
         "(0: none). Bias-corrected, so the first steps are not pulled toward zero."));
  bar->addWidget(m_smoothingBox);
  auto* slider = new QSlider(Qt::Horizontal);
  slider->setRange(0, 999);
  slider->setValue(static_cast<int>(m_smoothing * 1000));
  slider->setMaximumWidth(160);
  slider->setToolTip(m_smoothingBox->toolTip());
  bar->addWidget(slider);
  connect(slider, &QSlider::valueChanged, this, [this](int v) { m_smoothingBox->setValue(v / 1000.0); });
  connect(m_smoothingBox, &QDoubleSpinBox::valueChanged, this, [this, slider](double v) {
    const QSignalBlocker block(slider);
    slider->setValue(static_cast<int>(std::lround(v * 1000)));
    setSmoothing(v);
  });
  m_logLoss = new QCheckBox(tr("Log-scale loss"));
  m_logLoss->setObjectName("logLoss");
  bar->addWidget(m_logLoss);
  m_link = new QCheckBox(tr("Linked"));
  m_link->setObjectName("linkCharts");
  m_link->setChecked(true);
  m_link->setToolTip(
      tr("The charts move together: zooming or panning one's steps shows the same steps in all, "
         "and the mouse's read-out is shown in every chart at the same step."));
  bar->addWidget(m_link);
  m_xBox = new QComboBox;
  m_xBox->setObjectName("xAxis");
  m_xBox->addItems({tr("x: step"), tr("x: epoch"), tr("x: samples"), tr("x: wall time")});
  m_xBox->setToolTip(
      tr("What the charts' horizontal axis counts: optimizer steps, epochs, training samples seen, "
         "or the run's wall-clock time."));
  m_xBox->setFocusPolicy(Qt::StrongFocus);
  bar->addWidget(m_xBox);
  connect(m_xBox, &QComboBox::currentIndexChanged, this, [this](int i) { setXAxis(static_cast<XAxis>(i)); });
  auto* reset = new QPushButton(tr("Reset views"));
  reset->setToolTip(tr("Follow the data again in every chart (double-click a chart to reset just it)."));
  bar->addWidget(reset);
  m_overlayNote = new QLabel;
  bar->addWidget(m_overlayNote);
  // What the mouse does on a chart (Help > Guide says it too), in a label
  // that gives up its room before the controls do.
  auto* hint = new QLabel(tr("Drag: pan · wheel: zoom · right-click: log scale, save · F1: guide"));
  hint->setObjectName("chartHint");
  hint->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  hint->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
  hint->setToolTip(hint->text());
  hint->installEventFilter(this);  // elided to its width (eventFilter)
  bar->addWidget(hint, 1);
  top->addLayout(bar);

  m_charts[Loss] = new MetricChart(tr("Loss"), tr("cross-entropy"));
  m_charts[Accuracy] = new MetricChart(tr("Evaluation accuracy · R\u00b2"), tr("accuracy or R\u00b2"));
  m_charts[LearningRate] = new MetricChart(tr("Learning rate"), tr("lr"));
  m_charts[Throughput] = new MetricChart(tr("Throughput"), tr("samples/s"));
  m_charts[Memory] = new MetricChart(tr("Process memory"), tr("MiB"));
  m_charts[GradNorm] = new MetricChart(tr("Gradient norm"), tr("L2 norm (before clipping)"));
  m_charts[LossScale] = new MetricChart(tr("Loss scale and skipped steps (fp16 runs only)"), tr("scale"));
  m_charts[LossScale]->setRightAxisLabel(tr("skipped steps"));
  m_charts[LossScale]->setLogScale(true);
  m_charts[Utilisation] = new MetricChart(tr("Utilisation (the live run)"), tr("% (CPU: of all cores)"));
  // The charts scroll when the window is smaller than they need (a 1280x720
  // screen): the window's own minimum stays small enough to fit it.
  auto* gridHost = new QWidget;
  auto* grid = new QGridLayout(gridHost);
  grid->setContentsMargins(0, 0, 0, 0);
  grid->setSpacing(4);
  for (int i = 0; i < ChartCount; ++i) {
    m_charts[i]->setObjectName(chartFileName(static_cast<Chart>(i)));
    grid->addWidget(m_charts[i], i / 2, i % 2);
  }
  auto* scroll = new QScrollArea;
  scroll->setObjectName("chartScroll");
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setWidget(gridHost);
  top->addWidget(scroll, 1);
  connect(m_logLoss, &QCheckBox::toggled, m_charts[Loss], &MetricChart::setLogScale);
  connect(reset, &QPushButton::clicked, this, [this] {
    for (auto* c : m_charts) c->resetView();
  });
  // Smoothing from a chart's right-click menu: the loss chart's is the loss
  // smoothing above (its raw curve stays, faint); any other chart smooths its
  // own curves.
  for (MetricChart* c : m_charts)
    connect(c, &MetricChart::smoothingRequested, this, [this, c](double w) {
      if (c == m_charts[Loss])
        setSmoothing(w);
      else
        c->setSmoothing(w);
    });
  // Linked charts: one's zoom, pan, reset and crosshair are shown in all.
  for (MetricChart* source : m_charts) {
    const auto others = [this, source](const auto& apply) {
      if (!m_link->isChecked()) return;
      for (MetricChart* c : m_charts)
        if (c != source) apply(c);
    };
    connect(source, &MetricChart::crosshairMoved, this,
            [others](double x) { others([x](MetricChart* c) { c->showCrosshairAt(x); }); });
    connect(source, &MetricChart::crosshairLeft, this,
            [others] { others([](MetricChart* c) { c->hideCrosshair(); }); });
    connect(source, &MetricChart::stepRangeChanged, this, [others](double lower, double upper) {
      others([lower, upper](MetricChart* c) { c->setStepRange(lower, upper); });
    });
    connect(source, &MetricChart::viewResetByPerson, this,
            [others] { others([](MetricChart* c) { c->resetView(); }); });
  }
}

QString PlotsPanel::chartFileName(Chart c) {
  static const char* names[] = {"loss",   "accuracy",  "learning_rate", "throughput",
                                "memory", "grad_norm", "loss_scale",    "utilisation"};
  return names[c];
}

PlotsPanel::RunEntry* PlotsPanel::findRun(const QString& k) {
  for (auto& r : m_runs)
    if (r.key == k) return &r;
  return nullptr;
}

QStringList PlotsPanel::runKeys() const {
  QStringList keys;
  for (const auto& r : m_runs) keys << r.key;
  return keys;
}

PlotsPanel::Chart PlotsPanel::chartFor(MetricPlot c) {
  switch (c) {
    case MetricPlot::Loss:
      return Loss;
    case MetricPlot::Accuracy:
      return Accuracy;
    case MetricPlot::LearningRate:
      return LearningRate;
    case MetricPlot::Throughput:
      return Throughput;
    case MetricPlot::Memory:
      return Memory;
    case MetricPlot::GradNorm:
      return GradNorm;
    case MetricPlot::LossScale:
      return LossScale;
    case MetricPlot::None:
      break;
  }
  return ChartCount;
}

void PlotsPanel::addRunSeries(RunEntry& run, bool overlay) {
  // One run: a colour per quantity. Several: a colour per run, and the legend
  // says which run each curve is; curves of one chart then differ by dashes.
  const QString p = overlay ? run.label + ": " : QString();
  for (const MetricSpec& m : metricCatalog()) {
    const Chart chart = chartFor(m.chart);
    if (chart == ChartCount) continue;
    QColor c = overlay ? runColour(run.colorIndex) : runColour(m.colour);
    Qt::PenStyle pen = m.dashed ? Qt::DashLine : Qt::SolidLine;
    if (overlay && m.chart == MetricPlot::Memory)
      pen = m.colour == 1 ? Qt::DashLine : m.colour == 3 ? Qt::DotLine : pen;
    const bool raw = std::string(m.id) == "train_loss";  // drawn faint, under its smoothed curve
    MetricChart::SeriesStyle style = seriesStyle(raw ? faded(c) : c, pen, 1.0, m.dots, m.rightAxis);
    // Overlaid, each run's curves are listed once, by its name: they differ
    // by style as one run's do (faint raw loss, dots for evaluations). The
    // memory chart's quantities differ only by dashes: each keeps its entry.
    if (overlay && m.chart != MetricPlot::Memory) style.group = run.label;
    m_charts[chart]->addSeries(key(run.key, m.id), p + tr(m.label), style);
    if (raw) {
      MetricChart::SeriesStyle smooth = seriesStyle(c);
      smooth.group = style.group;
      m_charts[chart]->addSeries(key(run.key, "train_loss_smooth"), p + tr("train (smoothed)"), smooth);
    }
  }
  labelMemorySeries(run, overlay);
  MetricChart* use = m_charts[Utilisation];
  use->addSeries(key(run.key, "cpu"), p + tr("CPU (this process)"),
                 seriesStyle(overlay ? runColour(run.colorIndex) : runColour(0)));
  use->addSeries(key(run.key, "gpu"), p + tr("GPU"),
                 seriesStyle(overlay ? runColour(run.colorIndex) : runColour(1), Qt::DashLine));
  use->addSeries(key(run.key, "gpu_memory"), p + tr("GPU memory used"),
                 seriesStyle(overlay ? runColour(run.colorIndex) : runColour(2), Qt::DotLine));
}

void PlotsPanel::addSystemSample(const QString& runKey, int64_t step, double cpuPercent, double gpuPercent,
                                 double gpuMemoryPercent) {
  if (!findRun(runKey)) return;
  MetricChart* use = m_charts[Utilisation];
  const double x = static_cast<double>(step);
  use->append(key(runKey, "cpu"), x, cpuPercent);  // NaN: left out
  use->append(key(runKey, "gpu"), x, gpuPercent);
  use->append(key(runKey, "gpu_memory"), x, gpuMemoryPercent);
}

void PlotsPanel::setSystemNote(const QString& note) {
  m_charts[Utilisation]->setTitle(note.isEmpty() ? tr("Utilisation (the live run)")
                                                 : tr("Utilisation (the live run; %1)").arg(note));
}

void PlotsPanel::labelMemorySeries(RunEntry& run, bool overlay) {
  // The engine reports the CUDA allocator's figures on a GPU, and the
  // process's resident, virtual and peak resident memory on the CPU.
  const QString p = overlay ? run.label + ": " : QString();
  MetricChart* m = m_charts[Memory];
  m->setSeriesLabel(key(run.key, "mem_allocated_mib"), p + (m_memoryIsGpu ? tr("allocated") : tr("resident")));
  m->setSeriesLabel(key(run.key, "mem_reserved_mib"), p + (m_memoryIsGpu ? tr("reserved") : tr("virtual")));
  m->setSeriesLabel(key(run.key, "mem_peak_mib"), p + (m_memoryIsGpu ? tr("peak allocated") : tr("peak resident")));
}

void PlotsPanel::appendTo(RunEntry& run, const MetricRecord& r, bool announce) {
  const double x = static_cast<double>(r.step);
  // The wall clock at each step, for the x-axis in time (before the points
  // of this record are mapped).
  if (r.kind == RecordKind::Train && std::isfinite(r.wallSeconds)) {
    if (!run.wall.empty() && run.wall.x.back() >= x) run.wall.dropAfter(x - 1);  // after a rollback
    run.wall.append(x, r.wallSeconds);
  }
  if (auto warning = run.watch.observe(r)) {
    // A non-finite step has its own marker (below).
    if (r.kind != RecordKind::NonFinite) m_charts[Loss]->addMarker(x, warning->marker, key(run.key, "marker"));
    if (announce) Q_EMIT divergenceSeen(run.key, warning->text);
  }
  if (r.kind == RecordKind::LrChange) {
    for (Chart c : {Loss, LearningRate})
      m_charts[c]->addMarker(x, tr("lr → %1").arg(r.lr, 0, 'g', 4), key(run.key, "marker"));
    return;
  }
  if (r.kind == RecordKind::Unfreeze) {
    for (Chart c : {Loss, Accuracy, LearningRate}) m_charts[c]->addMarker(x, tr("unfreeze"), key(run.key, "marker"));
    return;
  }
  if (r.kind == RecordKind::EarlyStop) {
    for (Chart c : {Loss, Accuracy}) m_charts[c]->addMarker(x, tr("early stop"), key(run.key, "marker"));
    return;
  }
  if (r.kind == RecordKind::NonFinite) {
    m_charts[Loss]->addMarker(x, tr("not finite"), key(run.key, "marker"));
    return;
  }
  if (r.kind == RecordKind::OomBackoff) {
    for (Chart c : {Loss, Memory})
      m_charts[c]->addMarker(x, tr("out of memory: micro-batch → %1").arg(r.microBatch), key(run.key, "marker"));
    return;
  }
  if (r.kind == RecordKind::Rollback) {
    // The steps after the checkpoint no longer stand: their points go, the
    // run continues from there.
    for (auto* c : m_charts) c->dropAfter(run.key + "/", x);
    run.smoother = LossSmoother(m_smoothing);
    for (double y : m_charts[Loss]->series(key(run.key, "train_loss"))->y) run.smoother.add(y);
    for (Chart c : {Loss, LearningRate})
      m_charts[c]->addMarker(x, tr("rollback, lr → %1").arg(r.lr, 0, 'g', 4), key(run.key, "marker"));
    return;
  }
  for (const MetricSpec& m : metricCatalog()) {
    const Chart chart = chartFor(m.chart);
    if (chart == ChartCount || m.kind != r.kind) continue;
    // Skipped steps mean something only where there is loss scaling (fp16).
    if (m.whole == &MetricRecord::skippedSteps && !std::isfinite(r.lossScale)) continue;
    const double y = m.value(r);
    m_charts[chart]->append(key(run.key, m.id), x, y);
    if (m.real == &MetricRecord::trainLoss && std::isfinite(y))
      m_charts[chart]->append(key(run.key, "train_loss_smooth"), x, run.smoother.add(y));
  }
}

void PlotsPanel::showRuns(const std::vector<RunCurves>& runs) {
  const bool wasHidden = showsOwnPlan();
  for (auto* c : m_charts) c->clear();
  m_runs.clear();
  const bool overlay = runs.size() > 1;
  for (size_t i = 0; i < runs.size(); ++i) {
    m_runs.push_back(
        {runs[i].key, runs[i].label, static_cast<int>(i), LossSmoother(m_smoothing), {}, runs[i].shape, {}});
    addRunSeries(m_runs.back(), overlay);
    for (const auto& r : runs[i].records) appendTo(m_runs.back(), r);
  }
  m_overlayNote->setText(overlay ? tr("comparing %1 runs").arg(runs.size()) : QString());
  // The form's plan is not drawn beside a past run's own, nor beside several
  // runs (it would belong to none of them): nor is its title kept then.
  m_ownPlan = runs.size() == 1 && !runs.front().plan.empty();
  const bool hidden = m_ownPlan || overlay;
  if (hidden && !wasHidden) m_formPlanTitle = m_charts[LearningRate]->title();
  if (!hidden && wasHidden) m_charts[LearningRate]->setTitle(m_formPlanTitle);  // the form's plan again
  if (overlay) m_charts[LearningRate]->setTitle(tr("Learning rate (each run's own; no plan beside several runs)"));
  m_previewShown = m_ownPlan ? runs.front().plan : m_preview;
  if (m_ownPlan) {
    for (const auto& r : runs.front().records)  // its live changes and rollbacks, as they rescaled it then
      if (r.kind == RecordKind::LrChange || r.kind == RecordKind::Rollback) rescale(m_previewShown, r.step, r.lr);
    if (!runs.front().planTitle.isEmpty()) m_charts[LearningRate]->setTitle(runs.front().planTitle);
  }
  showPreview();
  refresh();
}

void PlotsPanel::beginRun(const QString& runKey, const QString& label, RunShape shape) {
  showRuns({{runKey, label, {}, shape}});
}

const PlotsPanel::RunEntry* PlotsPanel::runOfSeries(const QString& seriesKey) const {
  for (const auto& r : m_runs)
    if (seriesKey.startsWith(r.key + "/")) return &r;
  return nullptr;
}

double PlotsPanel::mapStep(const QString& seriesKey, double step) const {
  constexpr double none = std::numeric_limits<double>::quiet_NaN();
  const bool plan = seriesKey.startsWith("preview/");
  const RunEntry* run = plan ? nullptr : runOfSeries(seriesKey);
  const RunShape shape = plan  ? (m_ownPlan && !m_runs.empty() ? m_runs.front().shape : m_previewShape)
                         : run ? run->shape
                               : RunShape{};
  switch (m_xAxis) {
    case Steps:
      return step;
    case Epochs:
      return shape.stepsPerEpoch > 0 ? step / shape.stepsPerEpoch : none;
    case Samples:
      return shape.samplesPerStep > 0 ? step * shape.samplesPerStep : none;
    case WallTime: {
      if (!run || run->wall.empty()) return none;
      const auto& xs = run->wall.x;
      const auto& ys = run->wall.y;
      const auto at = std::lower_bound(xs.begin(), xs.end(), step);
      if (at == xs.end()) return ys.back();
      const auto i = static_cast<size_t>(at - xs.begin());
      if (*at == step || i == 0) return ys[i];
      const double t = (step - xs[i - 1]) / (xs[i] - xs[i - 1]);
      return ys[i - 1] + t * (ys[i] - ys[i - 1]);
    }
  }
  return none;
}

void PlotsPanel::setRunShape(const QString& runKey, RunShape shape) {
  RunEntry* run = findRun(runKey);
  if (!run) return;
  run->shape = shape;
  if (m_xAxis == Epochs || m_xAxis == Samples) setXAxis(m_xAxis);  // the run's curves mapped again
}

void PlotsPanel::setRateSetting(const QString& runKey, const QString& path) {
  if (RunEntry* run = findRun(runKey)) run->watch.setRateSetting(path);
}

void PlotsPanel::setXAxis(XAxis x) {
  m_xAxis = x;
  if (m_xBox->currentIndex() != x) {
    const QSignalBlocker block(m_xBox);
    m_xBox->setCurrentIndex(x);
  }
  static const char* labels[] = {QT_TR_NOOP("step"), QT_TR_NOOP("epoch"), QT_TR_NOOP("samples seen"),
                                 QT_TR_NOOP("wall time (h:m:s)")};
  const auto ticks = x == Steps      ? MetricChart::XTicks::WholeSteps
                     : x == WallTime ? MetricChart::XTicks::Time
                                     : MetricChart::XTicks::Plain;
  for (MetricChart* c : m_charts) {
    if (x == Steps)
      c->setXMap({}, tr(labels[x]), ticks);
    else
      c->setXMap([this](const QString& key, double step) { return mapStep(key, step); }, tr(labels[x]), ticks);
  }
}

void PlotsPanel::appendRecords(const QString& runKey, const std::vector<MetricRecord>& records) {
  RunEntry* run = findRun(runKey);
  if (!run) return;  // late records of a run no longer shown
  for (const auto& r : records) {
    appendTo(*run, r, true);
    if ((r.kind == RecordKind::LrChange || r.kind == RecordKind::Rollback) && m_runs.size() == 1)
      rescalePreview(r.step, r.lr);
  }
}

// A plan from the step after `step` on, scaled so that it continues from lr
// there (a live rate change, a rollback's halving).
void PlotsPanel::rescale(PlotSeries& p, int64_t step, double lr) {
  const auto at = std::lower_bound(p.x.begin(), p.x.end(), static_cast<double>(step + 1));
  if (at == p.x.end() || !(lr > 0)) return;
  const auto i = static_cast<size_t>(at - p.x.begin());
  if (!(p.y[i] > 0)) return;
  const double factor = lr / p.y[i];
  for (size_t j = i; j < p.size(); ++j) p.y[j] *= factor;
}

void PlotsPanel::rescalePreview(int64_t step, double lr) {
  rescale(m_previewShown, step, lr);
  showPreview();
}

void PlotsPanel::setSchedulePreview(PlotSeries lr, RunShape shape) {
  m_previewShape = shape;
  m_preview = std::move(lr);
  if (m_ownPlan) return;  // a past run's own plan is shown: the form's waits
  m_previewShown = m_preview;
  showPreview();
}

void PlotsPanel::showPreview() {
  // The plan of the settings in the form; beside several past runs it would
  // belong to none of them.
  if (m_runs.size() > 1) return;
  MetricChart* chart = m_charts[LearningRate];
  MetricChart::SeriesStyle s = seriesStyle(palette().color(QPalette::Mid), Qt::DashLine, 1.0);
  s.smoothable = false;  // a plan is drawn as planned
  chart->addSeries("preview/lr", tr("planned"), s);
  chart->setData("preview/lr", m_previewShown);
  chart->refresh();
}

void PlotsPanel::setMemoryIsGpu(bool gpu) {
  if (gpu == m_memoryIsGpu) return;
  m_memoryIsGpu = gpu;
  m_charts[Memory]->setTitle(gpu ? tr("GPU memory (CUDA allocator)") : tr("Process memory"));
  for (auto& run : m_runs) labelMemorySeries(run, m_runs.size() > 1);
}

void PlotsPanel::setSmoothing(double weight) {
  if (weight == m_smoothing) return;
  m_smoothing = weight;
  if (m_smoothingBox->value() != weight) m_smoothingBox->setValue(weight);
  recomputeSmoothed();
  refresh();
  Q_EMIT smoothingChanged(weight);
}

void PlotsPanel::recomputeSmoothed() {
  for (auto& run : m_runs) {
    run.smoother = LossSmoother(m_smoothing);
    const PlotSeries* raw = m_charts[Loss]->series(key(run.key, "train_loss"));
    if (!raw) continue;
    PlotSeries smooth;
    smooth.x = raw->x;
    smooth.y.reserve(raw->size());
    for (double y : raw->y) smooth.y.push_back(run.smoother.add(y));
    m_charts[Loss]->setData(key(run.key, "train_loss_smooth"), std::move(smooth));
  }
}

void PlotsPanel::refresh() {
  if (m_liveTimer) m_liveTimer->stop();
  for (auto* c : m_charts) c->refresh();
}

qint64 PlotsPanel::liveInterval() const {
  constexpr double kShare = 0.02;  // of the UI thread, at most
  return std::max<qint64>(33, static_cast<qint64>(std::ceil(m_liveCostMs / kShare)));
}

void PlotsPanel::refreshLive() {
  if (!m_liveTimer) {
    m_liveTimer = new QTimer(this);
    m_liveTimer->setSingleShot(true);
    connect(m_liveTimer, &QTimer::timeout, this, &PlotsPanel::redrawLive);
  }
  if (m_liveTimer->isActive()) return;  // a redraw is already due
  const qint64 since = m_sinceLive.isValid() ? m_sinceLive.elapsed() : std::numeric_limits<qint64>::max();
  const qint64 wait = liveInterval();
  if (since >= wait)
    redrawLive();
  else
    m_liveTimer->start(static_cast<int>(wait - since));
}

void PlotsPanel::redrawLive() {
  QElapsedTimer t;
  t.start();
  for (auto* c : m_charts) c->refreshNow();
  m_liveCostMs = static_cast<double>(t.nsecsElapsed()) * 1e-6;
  m_sinceLive.start();
}

QStringList PlotsPanel::exportPlots(const QString& dir, const QSize& size, const QString& caption) {
  // An export shows the run exported: not the form's plan, nor its title.
  MetricChart* lr = m_charts[LearningRate];
  const QString planTitle = lr->title();
  lr->removeSeries("preview/lr");
  lr->setTitle(tr("Learning rate"));
  QStringList failed;
  for (int i = 0; i < ChartCount; ++i) {
    const QString base = QDir(dir).filePath(chartFileName(static_cast<Chart>(i)));
    if (!m_charts[i]->savePng(base + ".png", size.width(), size.height(), caption)) failed << base + ".png";
    if (!m_charts[i]->savePdf(base + ".pdf", size.width(), size.height(), caption)) failed << base + ".pdf";
  }
  lr->setTitle(planTitle);
  showPreview();
  return failed;
}

}  // namespace studio::ui

namespace studio::ui {

bool PlotsPanel::eventFilter(QObject* watched, QEvent* event) {
  // The chart hint, cut short with an ellipsis where the bar is narrow.
  if (auto* hint = qobject_cast<QLabel*>(watched); hint && event->type() == QEvent::Resize) {
    const QString full = hint->toolTip();
    const QString shown = hint->fontMetrics().elidedText(full, Qt::ElideRight, hint->width());
    if (hint->text() != shown) hint->setText(shown);
  }
  return QWidget::eventFilter(watched, event);
}

}  // namespace studio::ui
