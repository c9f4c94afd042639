#include "ui/data/model_panel.h"

#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

namespace studio::ui {

ModelPanel::ModelPanel(QWidget* parent) : QWidget(parent) {
  auto* top = new QVBoxLayout(this);
  top->setContentsMargins(6, 6, 6, 6);
  m_head = new QLabel;
  m_head->setObjectName("modelHead");
  m_head->setWordWrap(true);
  top->addWidget(m_head);
  m_trust = new QPushButton;
  m_trust->setObjectName("trustModel");
  m_trust->hide();
  connect(m_trust, &QPushButton::clicked, this, [this] { Q_EMIT trustRequested(m_untrustedPath); });
  top->addWidget(m_trust, 0, Qt::AlignLeft);
  m_table = new QTableWidget(0, 5);
  m_table->setObjectName("modelLayers");
  m_table->setHorizontalHeaderLabels({tr("Layer"), tr("Type"), tr("Output shape"), tr("Parameters"), tr("Fine-tune")});
  m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_table->verticalHeader()->hide();
  m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  top->addWidget(m_table, 1);
  m_totals = new QLabel;
  m_totals->setObjectName("modelTotals");
  top->addWidget(m_totals);
}

void ModelPanel::showLoading() { m_head->setText(tr("Building the model…")); }

void ModelPanel::showSummary(const ModelSummary& s) {
  m_trust->hide();
  m_head->setStyleSheet(QString());
  m_head->setText(
      tr("<b>%1</b>: input %2, output %3, %4 classes")
          .arg(QString::fromStdString(s.model).toHtmlEscaped(), QString::fromStdString(s.input),
               QString::fromStdString(s.output))
          .arg(s.classNames.size()) +
      (s.weights.empty() ? QString() : tr("; starts from %1").arg(QString::fromStdString(s.weights).toHtmlEscaped())));
  // The fine-tune column says when each layer trains and at what rate (train.finetune).
  m_table->setColumnHidden(4, !s.finetune);
  m_table->setRowCount(static_cast<int>(s.rows.size()));
  const QLocale locale;
  for (size_t i = 0; i < s.rows.size(); ++i) {
    const auto& r = s.rows[i];
    const int row = static_cast<int>(i);
    m_table->setItem(row, 0, new QTableWidgetItem(QString::fromStdString(r.name)));
    m_table->setItem(row, 1, new QTableWidgetItem(QString::fromStdString(r.type)));
    m_table->setItem(row, 2, new QTableWidgetItem(r.output.empty() ? "—" : QString::fromStdString(r.output)));
    auto* params = new QTableWidgetItem(locale.toString(static_cast<qlonglong>(r.parameters)));
    params->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    m_table->setItem(row, 3, params);
    m_table->setItem(row, 4, new QTableWidgetItem(QString::fromStdString(r.finetune)));
  }
  const QString trained = s.firstEpochTrained < s.trainableParameters
                              ? tr("%1 trained (%2 of them in epoch 1, the others frozen then)")
                                    .arg(locale.toString(static_cast<qlonglong>(s.trainableParameters)))
                                    .arg(locale.toString(static_cast<qlonglong>(s.firstEpochTrained)))
                              : tr("%1 trained").arg(locale.toString(static_cast<qlonglong>(s.trainableParameters)));
  m_totals->setText(tr("%1 parameters, %2; a checkpoint holds %3 tensors")
                        .arg(locale.toString(static_cast<qlonglong>(s.parameters)))
                        .arg(trained)
                        .arg(s.stateTensors));
}

void ModelPanel::showError(const QString& error) {
  m_trust->hide();
  m_table->setRowCount(0);
  m_totals->clear();
  m_head->setStyleSheet("color: #d03c2f;");
  m_head->setText(tr("The model cannot be built: %1").arg(error.toHtmlEscaped()));
}

void ModelPanel::showUntrusted(const QString& path, const QString& sha256) {
  m_untrustedPath = path;
  m_table->setRowCount(0);
  m_totals->clear();
  m_head->setStyleSheet(QString());
  m_head->setText(tr("%1 is a TorchScript file: loading it runs the code in it (SHA-256 %2). Its layers are shown "
                     "once you trust it.")
                      .arg(path.toHtmlEscaped(), sha256.left(16) + "…"));
  m_trust->setText(tr("Trust this file and show its layers"));
  m_trust->show();
}

QString ModelPanel::totalsText() const { return m_totals->text(); }

}  // namespace studio::ui
