#include "ui/evaluation/eval_page.h"

#include <QComboBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include <cmath>

#include "ui/charts/plot_palette.h"
#include "ui/evaluation/figure_cells.h"

namespace studio::ui {

QString threeDecimals(double v) { return std::isfinite(v) ? QString::number(v, 'f', 3) : QStringLiteral("—"); }

namespace {

QCustomPlot* titledPlot(const char* name, const QFont& font) {
  auto* p = new QCustomPlot;
  p->setObjectName(name);
  p->setMinimumSize(180, 220);  // readable at 1280x720: the Evaluation tab scrolls, the window still fits
  p->plotLayout()->insertRow(0);
  p->plotLayout()->addElement(0, 0,
                              new QCPTextElement(p, QString(), QFont(font.family(), font.pointSize(), QFont::Bold)));
  return p;
}

}  // namespace

EvalPage::EvalPage(const QString& chooserLabel, const char* chooserName, const char* leftPlot, const char* rightPlot,
                   const QStringList& tableHeaders, const char* tableName, QWidget* parent)
    : QWidget(parent) {
  auto* top = new QVBoxLayout(this);
  top->setContentsMargins(0, 0, 0, 0);
  auto* bar = new QHBoxLayout;
  bar->addWidget(new QLabel(chooserLabel));
  m_chooser = new QComboBox;
  m_chooser->setObjectName(chooserName);
  m_chooser->setToolTip(tr("Which one the plots show."));
  bar->addWidget(m_chooser);
  bar->addStretch(1);
  top->addLayout(bar);
  auto* split = new QSplitter(Qt::Vertical);
  auto* plots = new QSplitter(Qt::Horizontal);
  m_left = titledPlot(leftPlot, font());
  m_right = titledPlot(rightPlot, font());
  plots->addWidget(m_left);
  plots->addWidget(m_right);
  split->addWidget(plots);
  m_table = figureTable(tableHeaders, tableName);
  m_table->setMinimumHeight(50);
  split->addWidget(m_table);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 1);
  top->addWidget(split, 1);
  connect(m_chooser, &QComboBox::currentIndexChanged, this, [this] { draw(); });
  applyPlotPalette(m_left, palette());
  applyPlotPalette(m_right, palette());
}

void EvalPage::changeEvent(QEvent* event) {
  if (event->type() == QEvent::PaletteChange) {
    applyPlotPalette(m_left, palette());
    applyPlotPalette(m_right, palette());
    m_left->replot(QCustomPlot::rpQueuedReplot);
    m_right->replot(QCustomPlot::rpQueuedReplot);
  }
  QWidget::changeEvent(event);
}

void EvalPage::setChoices(const std::vector<std::string>& names) {
  const int keep = m_chooser->currentIndex();
  const QSignalBlocker quiet(m_chooser);
  m_chooser->clear();
  for (const auto& n : names) m_chooser->addItem(QString::fromStdString(n));
  m_chooser->setCurrentIndex(keep >= 0 && keep < m_chooser->count() ? keep : 0);
}

void EvalPage::setRow(int row, const QStringList& cells) {
  for (int c = 0; c < cells.size(); ++c) {
    auto* item = new QTableWidgetItem(cells[c]);
    if (c > 0) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    m_table->setItem(row, c, item);
  }
}

void EvalPage::setTitle(QCustomPlot* plot, const QString& title) {
  if (auto* t = qobject_cast<QCPTextElement*>(plot->plotLayout()->element(0, 0))) t->setText(title);
}

}  // namespace studio::ui
