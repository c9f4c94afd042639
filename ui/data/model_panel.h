#pragma once
// The Model tab: each layer's output shape and parameter count, and the
// totals, for the model the settings build (built-in or TorchScript). A
// TorchScript file's code runs to make the summary, so for a file not yet
// trusted the panel asks first.
// Thread: the UI thread.

#include <QWidget>

#include "studio/model_summary.h"

class QLabel;
class QPushButton;
class QTableWidget;

namespace studio::ui {

class ModelPanel : public QWidget {
  Q_OBJECT

 public:
  explicit ModelPanel(QWidget* parent = nullptr);
  void showLoading();
  void showSummary(const ModelSummary& summary);
  void showError(const QString& error);
  // A TorchScript file that has not been trusted: a button to trust it.
  void showUntrusted(const QString& path, const QString& sha256);
  QTableWidget* table() const { return m_table; }
  QString totalsText() const;

 Q_SIGNALS:
  void trustRequested(const QString& path);

 private:
  QLabel* m_head;
  QLabel* m_totals;
  QPushButton* m_trust;
  QTableWidget* m_table;
  QString m_untrustedPath;
};

}  // namespace studio::ui
