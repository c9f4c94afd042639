#include "ui/data/data_panel.h"

#include "ui/data/augment_preview_view.h"

#include <QEvent>
#include <QGridLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QSplitter>
#include <QStackedWidget>
#include <QTableWidget>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include "ui/charts/plot_palette.h"

namespace studio::ui {
namespace {

const QColor kSplitColours[] = {QColor(0, 114, 178), QColor(230, 159, 0), QColor(0, 158, 115)};

// "Training: 24 images, 300 boxes — from": a detector's examples are its images.
QString splitLine(const QString& name, int64_t n, int64_t boxes, const std::string& from) {
  const QString what =
      boxes > 0 ? QObject::tr("%1 images, %2 boxes").arg(n).arg(boxes) : QObject::tr("%1 examples").arg(n);
  return QObject::tr("<b>%1</b>: %2 — %3").arg(name, what, QString::fromStdString(from).toHtmlEscaped());
}

}  // namespace

DataPanel::DataPanel(QWidget* parent) : QWidget(parent) {
  auto* top = new QVBoxLayout(this);
  top->setContentsMargins(6, 6, 6, 6);
  auto* head = new QHBoxLayout;
  m_summary = new QLabel;
  m_summary->setObjectName("dataSummary");
  m_summary->setWordWrap(true);
  m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
  head->addWidget(m_summary, 1);
  auto* recheck = new QPushButton(tr("Check again"));
  recheck->setObjectName("recheckData");
  recheck->setToolTip(tr("Read the data again (after files changed on disk)."));
  connect(recheck, &QPushButton::clicked, this, &DataPanel::recheckRequested);
  head->addWidget(recheck, 0, Qt::AlignTop);
  top->addLayout(head);
  m_error = new QLabel;
  m_error->setObjectName("dataError");
  m_error->setWordWrap(true);
  m_error->setStyleSheet("color: #d03c2f;");
  m_error->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_error->hide();
  top->addWidget(m_error);

  auto* split = new QSplitter(Qt::Vertical);
  m_counts = new QCustomPlot;
  m_counts->setObjectName("classCounts");
  m_counts->setMinimumHeight(160);
  m_counts->plotLayout()->insertRow(0);
  m_counts->plotLayout()->addElement(
      0, 0,
      new QCPTextElement(m_counts, tr("Examples per class"), QFont(font().family(), font().pointSize(), QFont::Bold)));
  placeLegendBelow(m_counts);  // not over the bars
  split->addWidget(m_counts);

  m_examples = new QStackedWidget;
  auto* scroll = new QScrollArea;
  scroll->setWidgetResizable(true);
  m_samplesHost = new QWidget;
  m_samples = new QGridLayout(m_samplesHost);
  m_samples->setAlignment(Qt::AlignTop | Qt::AlignLeft);
  scroll->setWidget(m_samplesHost);
  m_examples->addWidget(scroll);
  m_table = new QTableWidget;
  m_table->setObjectName("tablePreview");
  m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_examples->addWidget(m_table);
  split->addWidget(m_examples);
  m_augment = new AugmentPreviewView;
  auto* augmentScroll = new QScrollArea;
  augmentScroll->setWidgetResizable(true);
  augmentScroll->setWidget(m_augment);
  split->addWidget(augmentScroll);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 2);
  split->setStretchFactor(2, 1);
  top->addWidget(split, 1);
  applyPlotPalette(m_counts, palette());
}

void DataPanel::changeEvent(QEvent* event) {
  if (event->type() == QEvent::PaletteChange) {
    applyPlotPalette(m_counts, palette());
    m_counts->replot(QCustomPlot::rpQueuedReplot);
  }
  QWidget::changeEvent(event);
}

void DataPanel::showLoading(const QString& what) {
  m_summary->setText(tr("Reading the data: %1…").arg(what.toHtmlEscaped()));
}

void DataPanel::showPreview(const DataPreview& p) {
  m_preview = p;
  m_error->setVisible(!p.ok);
  m_error->setText(p.ok ? QString() : tr("The data cannot be read: %1").arg(p.error));
  if (!p.ok) {
    m_summary->setText(tr("No data to show."));
    m_counts->clearPlottables();
    m_counts->replot();
    while (QLayoutItem* item = m_samples->takeAt(0)) {
      delete item->widget();
      delete item;
    }
    m_table->clear();
    return;
  }
  const DatasetDescription& d = p.description;
  QStringList lines;
  if (d.targetNames.empty()) {
    lines << tr("<b>%1</b> data, %2 per example, %3 classes")
                 .arg(QString::fromStdString(d.format.name()))
                 .arg(QString::fromStdString(d.input.text()))
                 .arg(d.classNames.size());
  } else {
    QStringList targets;
    for (const auto& t : d.targetNames) targets << QString::fromStdString(t).toHtmlEscaped();
    lines << (d.task == TaskKind::multilabel ? tr("<b>%1</b> data, %2 per example; %3 labels: %4")
                                             : tr("<b>%1</b> data, %2 per example; regression of %4"))
                 .arg(QString::fromStdString(d.format.name()))
                 .arg(QString::fromStdString(d.input.text()))
                 .arg(targets.size())
                 .arg(targets.join(", "));
  }
  lines << splitLine(tr("Training"), d.trainSize(), d.boxes(d.trainCounts), d.trainFrom);
  if (d.valSize() > 0) lines << splitLine(tr("Validation"), d.valSize(), d.boxes(d.valCounts), d.valFrom);
  lines << splitLine(tr("Test"), d.testSize(), d.boxes(d.testCounts), d.testFrom);
  if (d.otherFiles > 0) lines << tr("%1 files in the folder are not images and are left out.").arg(d.otherFiles);
  if (d.correctionsRemoved > 0 || d.correctionsRelabelled > 0)
    lines << tr("Corrections (data.corrections): %1 files removed, %2 relabelled; your files are unchanged.")
                 .arg(d.correctionsRemoved)
                 .arg(d.correctionsRelabelled);
  m_summary->setText(lines.join("<br>"));
  drawCounts(p);
  if (d.kind == DataKind::Table) {
    fillTable(p);
    m_examples->setCurrentIndex(1);
  } else {
    fillSamples(p);
    m_examples->setCurrentIndex(0);
  }
}

void DataPanel::drawCounts(const DataPreview& p) {
  const DatasetDescription& d = p.description;
  m_counts->clearPlottables();
  QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
  QVector<double> x;
  for (size_t k = 0; k < d.classNames.size(); ++k) {
    x << static_cast<double>(k + 1);
    ticker->addTick(static_cast<double>(k + 1), QString::fromStdString(d.classNames[k]));
  }
  m_counts->xAxis->setTicker(ticker);
  m_counts->xAxis->setTickLabelRotation(d.classNames.size() > 8 ? 40 : 0);
  m_counts->xAxis->setRange(0.3, static_cast<double>(d.classNames.size()) + 0.7);
  const std::vector<int64_t>* counts[] = {&d.trainCounts, &d.valCounts, &d.testCounts};
  const QString names[] = {tr("training"), tr("validation (held out)"), tr("test")};
  QCPBars* below = nullptr;
  double top = 0;
  std::vector<double> stack(d.classNames.size(), 0.0);
  for (int s = 0; s < 3; ++s) {
    QVector<double> y;
    for (size_t k = 0; k < d.classNames.size(); ++k) {
      const double v = static_cast<double>((*counts[s])[k]);
      y << v;
      stack[k] += v;
      top = std::max(top, stack[k]);
    }
    if (s == 1 && d.valSize() == 0) continue;
    auto* bars = new QCPBars(m_counts->xAxis, m_counts->yAxis);
    bars->setName(names[s]);
    bars->setData(x, y);
    bars->setWidth(0.7);
    bars->setPen(Qt::NoPen);
    bars->setBrush(kSplitColours[s]);
    if (below) bars->moveAbove(below);
    below = bars;
  }
  m_counts->yAxis->setRange(0, top * 1.08 + 1);
  m_counts->yAxis->setLabel(boxesTask(d.task)                  ? tr("boxes")
                            : d.task == TaskKind::segmentation ? tr("pixels")
                                                               : tr("examples"));
  applyPlotPalette(m_counts, palette());
  m_counts->replot();
}

std::vector<std::vector<double>> DataPanel::barValues() const {
  std::vector<std::vector<double>> out;
  for (int i = 0; i < m_counts->plottableCount(); ++i) {
    auto* bars = qobject_cast<QCPBars*>(m_counts->plottable(i));
    if (!bars) continue;
    std::vector<double> v;
    for (auto it = bars->data()->constBegin(); it != bars->data()->constEnd(); ++it) v.push_back(it->value);
    out.push_back(v);
  }
  return out;
}

int DataPanel::sampleCount() const {
  int n = 0;
  for (const auto& row : m_preview.samples) n += static_cast<int>(row.size());
  return n;
}

void DataPanel::fillSamples(const DataPreview& p) {
  while (QLayoutItem* item = m_samples->takeAt(0)) {
    delete item->widget();
    delete item;
  }
  const auto& names = p.description.classNames;
  for (size_t k = 0; k < p.samples.size(); ++k) {
    const QString title = k < names.size() ? QString::fromStdString(names[k]) : tr("examples");
    // A segmentation's counts are pixels: its classes' shares of the training masks.
    const auto& counts = p.description.trainCounts;
    const double pixels = static_cast<double>(std::accumulate(counts.begin(), counts.end(), int64_t{0}));
    const QString count = p.description.task != TaskKind::segmentation ? QString::number(counts[k])
                          : pixels > 0
                              ? tr("%1% of the pixels").arg(100.0 * static_cast<double>(counts[k]) / pixels, 0, 'f', 1)
                              : tr("no pixels");
    auto* name = new QLabel(QString("%1 (%2)").arg(title, count));
    m_samples->addWidget(name, static_cast<int>(k), 0);
    for (size_t i = 0; i < p.samples[k].size(); ++i) {
      auto* cell = new QLabel;
      const QImage& img = p.samples[k][i];
      if (img.isNull()) {
        cell->setText(tr("unreadable"));
      } else {
        // A detector's samples come with their boxes drawn, at their own size.
        const int side = annotatedTask(p.description.task) ? kBoxedSampleSize : 56;
        cell->setPixmap(QPixmap::fromImage(img.scaled(side, side, Qt::KeepAspectRatio, Qt::SmoothTransformation)));
      }
      cell->setToolTip(QString::fromStdString(names[k]));
      m_samples->addWidget(cell, static_cast<int>(k), static_cast<int>(i) + 1);
    }
  }
}

void DataPanel::fillTable(const DataPreview& p) {
  m_table->clear();
  m_table->setColumnCount(static_cast<int>(p.columns.size()));
  m_table->setRowCount(static_cast<int>(p.rows.size()));
  m_table->setHorizontalHeaderLabels(p.columns);
  for (size_t r = 0; r < p.rows.size(); ++r)
    for (int c = 0; c < p.rows[r].size(); ++c)
      m_table->setItem(static_cast<int>(r), c, new QTableWidgetItem(p.rows[r][c]));
  m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
}

}  // namespace studio::ui
