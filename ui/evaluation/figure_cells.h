#pragma once
// What the Evaluation tab's pages share: a figure as a percentage, a table
// cell for a name or a number, a read-only figures table, and axis ticks
// named by classes (or labels, targets).
// Thread: the UI thread.

#include <QHeaderView>
#include <QString>
#include <QStringList>
#include <QTableWidget>

#include <qcustomplot.h>

#include <cmath>
#include <string>
#include <vector>

namespace studio::ui {

inline QString percentText(double v) {
  return std::isfinite(v) ? QString::number(100.0 * v, 'f', 1) + " %" : QStringLiteral("\u2014");
}

inline QTableWidgetItem* figureCell(const QString& text, bool number = false) {
  auto* item = new QTableWidgetItem(text);
  if (number) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  return item;
}

inline QTableWidget* figureTable(const QStringList& headers, const char* name) {
  auto* t = new QTableWidget(0, static_cast<int>(headers.size()));
  t->setObjectName(name);
  t->setHorizontalHeaderLabels(headers);
  t->setEditTriggers(QAbstractItemView::NoEditTriggers);
  t->verticalHeader()->hide();
  t->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  t->horizontalHeader()->setStretchLastSection(true);
  return t;
}

inline QSharedPointer<QCPAxisTickerText> nameTicker(const std::vector<std::string>& names) {
  QSharedPointer<QCPAxisTickerText> t(new QCPAxisTickerText);
  for (size_t k = 0; k < names.size(); ++k) t->addTick(static_cast<double>(k), QString::fromStdString(names[k]));
  return t;
}

}  // namespace studio::ui
