#pragma once
// One chart of the plots panel: named curves over optimizer steps, drawn with
// QCustomPlot from full-resolution data (decimated per pixel column on every
// redraw), with zoom, pan, a log-scale toggle, a crosshair read-out, vertical
// markers and a reset view. While the person has not zoomed or panned, the
// view follows the data.
// Thread: the UI thread.

#include <QColor>
#include <QPen>
#include <QString>
#include <QWidget>

#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "ui/charts/plot_series.h"

class QCustomPlot;
class QCPGraph;
class QCPItemStraightLine;
class QCPItemText;
class QCPItemTracer;
class QCPRange;

namespace studio::ui {

class MetricChart : public QWidget {
  Q_OBJECT

 public:
  struct SeriesStyle {
    QPen pen;
    bool dots = false;       // draw a dot at each sample (sparse series: evaluations)
    bool rightAxis = false;  // a second quantity with its own scale
    bool smoothable = true;  // drawn smoothed with the chart's smoothing (dots never are)
    QString group;           // its run's name: with curves of several groups drawn, the legend lists each group once
  };

  MetricChart(const QString& title, const QString& yLabel, QWidget* parent = nullptr);
  ~MetricChart() override;

  QString title() const { return m_title; }
  // The title as drawn: elided to the chart's width.
  QString shownTitle() const;
  void setTitle(const QString& title);
  void setRightAxisLabel(const QString& label);
  // The value axis's name ("cross-entropy", "MSE"); smoothing adds its weight.
  void setYLabel(const QString& label);
  QString yLabel() const { return m_yLabel; }

  // Adds an empty curve; a key already present is left as it is.
  void addSeries(const QString& key, const QString& label, const SeriesStyle& style);
  bool hasSeries(const QString& key) const { return m_series.count(key) > 0; }
  void setSeriesLabel(const QString& key, const QString& label);
  void append(const QString& key, double x, double y);
  void setData(const QString& key, PlotSeries data);
  const PlotSeries* series(const QString& key) const;
  std::vector<QString> seriesKeys() const;
  // Removes every curve and marker.
  void clear();
  // One series gone, its legend entry with it (nothing when there is none).
  void removeSeries(const QString& key);
  // Drops the samples after step x of the curves whose key starts with prefix
  // (a run that rolled back to that step).
  void dropAfter(const QString& keyPrefix, double x);

  // A dashed vertical line at step x with a label (a learning-rate change);
  // key names the run it belongs to for the x mapping (setXMap).
  void addMarker(double x, const QString& label, const QString& key = QString());
  int markerCount() const { return static_cast<int>(m_markers.size()); }
  QStringList markerLabels() const;

  // The step axis shown as something else: map(key, step) is the x of series
  // `key`'s sample at that step (epoch, samples seen, seconds); a series with
  // a sample that maps to NaN is left out. Steps again with an empty map.
  // Series keep their steps (series() and the read-out's "step N").
  enum class XTicks { WholeSteps, Plain, Time };
  using XMap = std::function<double(const QString& key, double step)>;
  void setXMap(XMap map, const QString& label, XTicks ticks);
  QString xLabel() const { return m_xLabel; }

  // This chart's curves drawn as a bias-corrected moving average of this
  // weight (0: as recorded), as TensorBoard smooths; the read-out shows the
  // smoothed values. The right-click menu asks for it (smoothingRequested).
  void setSmoothing(double weight);
  double smoothing() const { return m_smoothing; }
  static QList<double> smoothingChoices() { return {0.0, 0.6, 0.9, 0.99}; }
  // The x of each sample drawn for this series (mapped), for tests.
  const PlotSeries* shownSeries(const QString& key) const;

  void setLogScale(bool on);
  bool logScale() const { return m_logScale; }
  // Back to following the data, with everything in view.
  void resetView();
  bool following() const { return m_follow; }

  // Redraws from the full data (coalesced: one queued replot).
  void refresh();
  // Draws now and waits for it; for benchmarks and screenshots.
  void refreshNow();
  // Points handed to QCustomPlot for drawing at the last refresh, all curves.
  size_t drawnPoints() const { return m_drawnPoints; }

  // The chart as a file (0: the size on screen), without the crosshair, and
  // with the caption (the run's name and settings) under it when given.
  bool savePng(const QString& path, int width = 0, int height = 0, const QString& caption = QString());
  bool savePdf(const QString& path, int width = 0, int height = 0, const QString& caption = QString());
  // The context menu's Save as: at the size and with the caption an export
  // uses (the window's chart export size, the shown runs' captions), given
  // by the window; without one, the chart's size and no caption.
  using SaveLook = std::function<void(QSize& size, QString& caption)>;
  void setSaveLook(SaveLook look) { m_saveLook = std::move(look); }
  bool saveAsShown(const QString& path);  // .png or .pdf
  // What the last saved picture showed: its title and its legend's entries.
  QString savedTitle() const { return m_savedTitle; }
  QStringList savedLegend() const { return m_savedLegend; }
  QString savedCaption() const { return m_savedCaption; }
  // The crosshair read-out is on screen (the mouse is over the chart).
  bool crosshairShown() const;
  // A curve is drawn (a click on its legend entry hides it; another shows it).
  bool seriesShown(const QString& key) const;
  void setSeriesShown(const QString& key, bool shown);
  // The step axis's distance between ticks (whole steps: at least 1).
  double xTickStep() const;
  // The value axis's tick labels as drawn at the last replot.
  QStringList yTickLabels() const;

  // The read-out at step x, as if the mouse were there (a linked chart's
  // crosshair), and hiding it.
  void showCrosshairAt(double x) { showCrosshair(x); }
  void hideCrosshair();
  // Shows steps lower..upper and stops following (a linked chart's zoom),
  // without signalling it back.
  void setStepRange(double lower, double upper);
  double stepRangeLower() const;
  double stepRangeUpper() const;

  QCustomPlot* plot() const { return m_plot; }

 Q_SIGNALS:
  // The person's mouse over the chart is at step x; it left the chart.
  void crosshairMoved(double x);
  void crosshairLeft();
  // The person zoomed or panned the step axis; double-clicked to reset.
  void stepRangeChanged(double lower, double upper);
  void viewResetByPerson();
  // A smoothing weight chosen in the right-click menu.
  void smoothingRequested(double weight);

 protected:
  void changeEvent(QEvent* event) override;
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  struct Curve {
    QString label;
    PlotSeries data;  // x: steps
    QCPGraph* graph = nullptr;
    PlotSeries shown;  // x mapped (setXMap), y smoothed (setSmoothing); empty when neither
    bool smoothable = true;
    double ema = 0, debias = 1;  // the smoothing's running state over data
    QString group;
  };
  struct Marker {
    QCPItemStraightLine* line = nullptr;
    QCPItemText* text = nullptr;
    double step = 0;
    QString key;
  };
  bool transformed(const Curve& c) const { return m_xMap || (m_smoothing > 0 && c.smoothable); }
  const PlotSeries& drawn(const Curve& c) const { return transformed(c) ? c.shown : c.data; }
  double smoothNext(Curve& c, double y) const;
  void remap(const QString& key, Curve& c) const;
  void placeMarker(const Marker& m) const;
  void fitTitle();
  void updateGraphs(bool fitView);
  void applyPalette();
  void showCrosshair(double x);
  void showContextMenu(const QPoint& pos);
  void chooseValueTicker(const QCPRange& range);
  void placeLegend(bool shown);
  template <class Save>
  bool saveWith(const QString& path, const QString& caption, Save save);  // false: not a file of its own

  QString m_title;
  SaveLook m_saveLook;
  QString m_savedCaption;
  QString m_savedTitle;
  QStringList m_savedLegend;
  QCustomPlot* m_plot;
  std::map<QString, Curve> m_series;
  std::vector<QString> m_order;
  std::vector<QString> m_listed;  // the curves with points, in the order they got them (the legend's)
  std::vector<Marker> m_markers;
  XMap m_xMap;
  QString m_xLabel;
  double m_smoothing = 0;
  QString m_yLabel;
  QCPItemStraightLine* m_crossLine = nullptr;
  QCPItemText* m_crossText = nullptr;
  bool m_logScale = false;
  bool m_follow = true;
  bool m_updating = false;
  bool m_linking = false;  // setStepRange: not the person's zoom
  size_t m_drawnPoints = 0;
};

}  // namespace studio::ui
