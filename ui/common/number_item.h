#pragma once
// A table cell shown as text ("42.0 %", "3") that sorts by its number
// (kept in Qt::UserRole), not by its text: the Predict tab's and the
// Evaluation tab's tables sort by their columns.
// Thread: the UI thread (a QTableWidgetItem).

#include <QString>
#include <QTableWidgetItem>

namespace studio::ui {

class NumberItem : public QTableWidgetItem {
 public:
  NumberItem(double value, const QString& text) : QTableWidgetItem(text) { setData(Qt::UserRole, value); }
  explicit NumberItem(int count) : NumberItem(count, QString::number(count)) {}
  bool operator<(const QTableWidgetItem& other) const override {
    return data(Qt::UserRole).toDouble() < other.data(Qt::UserRole).toDouble();
  }
};

}  // namespace studio::ui
