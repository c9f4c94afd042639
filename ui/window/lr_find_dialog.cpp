#include "ui/window/lr_find_dialog.h"

#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include <cmath>

#include <qcustomplot.h>

#include "ui/charts/plot_palette.h"

namespace studio::ui {

LrFindDialog::LrFindDialog(QWidget* parent) : QDialog(parent) {
  setWindowTitle(tr("Find a learning rate"));
  setModal(false);
  auto* layout = new QVBoxLayout(this);
  auto* form = new QFormLayout;
  m_min = new QDoubleSpinBox(this);
  m_max = new QDoubleSpinBox(this);
  for (QDoubleSpinBox* box : {m_min, m_max}) {
    box->setDecimals(8);
    box->setRange(1e-8, 100);
  }
  m_steps = new QSpinBox(this);
  m_steps->setRange(5, 100000);
  form->addRow(tr("Lowest rate"), m_min);
  form->addRow(tr("Highest rate"), m_max);
  form->addRow(tr("Steps"), m_steps);
  layout->addLayout(form);
  setOptions({});

  m_plot = new QCustomPlot(this);
  m_plot->setMinimumSize(480, 300);
  m_plot->xAxis->setScaleType(QCPAxis::stLogarithmic);
  m_plot->xAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
  m_plot->xAxis->setLabel(tr("learning rate (log)"));
  m_plot->yAxis->setLabel(tr("training loss"));
  QCPGraph* raw = m_plot->addGraph();
  raw->setName(tr("loss"));
  raw->setPen(QPen(QColor(31, 119, 180, 90)));
  QCPGraph* smooth = m_plot->addGraph();
  smooth->setName(tr("smoothed"));
  smooth->setPen(QPen(QColor(31, 119, 180), 2));
  placeLegendBelow(m_plot);  // not over the "suggested" label
  layout->addWidget(m_plot, 1);

  m_status = new QLabel(tr("The sweep trains from fresh weights, one step per rate, in its own run folder; your "
                           "settings are not changed until you use the result."),
                        this);
  m_status->setWordWrap(true);
  layout->addWidget(m_status);

  auto* buttons = new QDialogButtonBox(this);
  m_start = buttons->addButton(tr("Start sweep"), QDialogButtonBox::ActionRole);
  m_use = buttons->addButton(tr("Use the suggestion"), QDialogButtonBox::AcceptRole);
  m_use->setEnabled(false);
  buttons->addButton(QDialogButtonBox::Close);
  layout->addWidget(buttons);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  connect(m_start, &QPushButton::clicked, this, [this] { Q_EMIT startRequested(options()); });
  connect(m_use, &QPushButton::clicked, this, [this] {
    if (std::isfinite(m_suggestion)) Q_EMIT useRequested(m_target, QString::number(m_suggestion, 'g', 3));
  });
}

LrFindOptions LrFindDialog::options() const {
  LrFindOptions o;
  o.lrMin = m_min->value();
  o.lrMax = m_max->value();
  o.steps = m_steps->value();
  return o;
}

void LrFindDialog::setOptions(const LrFindOptions& o) {
  m_min->setValue(o.lrMin);
  m_max->setValue(o.lrMax);
  m_steps->setValue(static_cast<int>(o.steps));
}

void LrFindDialog::setTarget(const QString& settingPath) {
  m_target = settingPath;
  m_use->setText(std::isfinite(m_suggestion) ? tr("Use %1 as %2").arg(m_suggestion, 0, 'g', 3).arg(m_target)
                                             : tr("Use the suggestion as %1").arg(m_target));
}

void LrFindDialog::begin(const QString& runDir) {
  m_smoother.reset();
  m_suggestion = MetricRecord::kNone;
  for (int i = 0; i < m_plot->graphCount(); ++i) m_plot->graph(i)->data()->clear();
  m_plot->clearItems();
  m_start->setEnabled(false);
  m_use->setEnabled(false);
  setTarget(m_target);
  m_status->setText(tr("Sweeping… (%1)").arg(runDir));
  m_plot->replot();
}

void LrFindDialog::addRecords(const std::vector<MetricRecord>& records) {
  bool added = false;
  for (const auto& r : records) {
    if (r.kind != RecordKind::Train || !(r.lr > 0) || !std::isfinite(r.trainLoss)) continue;
    m_plot->graph(0)->addData(r.lr, r.trainLoss);
    m_plot->graph(1)->addData(r.lr, m_smoother.add(r.trainLoss));
    added = true;
  }
  if (!added) return;
  // The loss axis follows the smoothed curve (a diverging end would squash it).
  bool found = false;
  const QCPRange y = m_plot->graph(1)->getValueRange(found);
  const QCPRange x = m_plot->graph(0)->getKeyRange(found);
  if (found) {
    m_plot->xAxis->setRange(x.lower, x.upper > x.lower ? x.upper : x.lower * 10);
    m_plot->yAxis->setRange(y.lower - 0.05 * y.size(), y.upper + 0.05 * y.size() + 1e-6);
  }
  m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void LrFindDialog::finish(const RunSummary& s) {
  m_start->setEnabled(true);
  m_suggestion = s.lrFind.suggestion;
  if (s.status == RunStatus::failed) {
    m_status->setText(tr("The sweep failed: %1").arg(QString::fromStdString(s.error)));
  } else if (!std::isfinite(m_suggestion)) {
    m_status->setText(tr("%1; too few steps to suggest a rate (raise the steps or the highest rate)")
                          .arg(QString::fromStdString(s.lrFind.end)));
  } else {
    auto* line = new QCPItemStraightLine(m_plot);
    line->point1->setCoords(m_suggestion, 0);
    line->point2->setCoords(m_suggestion, 1);
    line->setPen(QPen(QColor(214, 39, 40), 1.5, Qt::DashLine));
    auto* label = new QCPItemText(m_plot);
    label->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
    label->position->setCoords(m_suggestion, 0.05);
    label->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
    label->setText(tr(" suggested %1").arg(m_suggestion, 0, 'g', 3));
    label->setColor(QColor(214, 39, 40));
    m_status->setText(tr("%1. Suggested %2 (the smoothed loss falls fastest there); the lowest loss at %3.")
                          .arg(QString::fromStdString(s.lrFind.end))
                          .arg(m_suggestion, 0, 'g', 3)
                          .arg(s.lrFind.minimum, 0, 'g', 3));
    m_use->setEnabled(true);
  }
  setTarget(m_target);
  m_plot->replot();
}

int LrFindDialog::points() const { return m_plot->graph(0)->dataCount(); }

QString LrFindDialog::status() const { return m_status->text(); }

}  // namespace studio::ui
