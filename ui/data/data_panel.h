#pragma once
// The Data tab: what the settings' data amounts to before a run starts — the
// format, input shape and where each split comes from, the class counts of
// each split as a bar chart (what will be held out included; a detector's:
// boxes), a few images of each class with their names (a detector's with
// their boxes drawn), or the first rows of a table, and the
// error that keeps the data from being read.
// Thread: the UI thread.

#include <QWidget>

#include "ui/data/data_preview.h"

class QCustomPlot;
class QLabel;
class QGridLayout;
class QStackedWidget;
class QTableWidget;

namespace studio::ui {

class AugmentPreviewView;

class DataPanel : public QWidget {
  Q_OBJECT

 public:
  explicit DataPanel(QWidget* parent = nullptr);
  void showLoading(const QString& what);
  void showPreview(const DataPreview& preview);
  const DataPreview& preview() const { return m_preview; }
  // Counts drawn in the bar chart: [split][class] (train, validation, test).
  std::vector<std::vector<double>> barValues() const;
  int sampleCount() const;
  AugmentPreviewView* augmentPreview() const { return m_augment; }

 Q_SIGNALS:
  void recheckRequested();

 protected:
  void changeEvent(QEvent* event) override;

 private:
  void fillSamples(const DataPreview& p);
  void fillTable(const DataPreview& p);
  void drawCounts(const DataPreview& p);

  DataPreview m_preview;
  QLabel* m_summary;
  QLabel* m_error;
  QCustomPlot* m_counts;
  QStackedWidget* m_examples;
  AugmentPreviewView* m_augment;
  QWidget* m_samplesHost;
  QGridLayout* m_samples;
  QTableWidget* m_table;
};

}  // namespace studio::ui
