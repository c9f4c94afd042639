#pragma once
// Run > Search…: a hyperparameter search of the form's settings. The space
// is a table, a row per setting: the setting, and its range as the CLI's
// --space takes it (float:LOW:HIGH[:log], int:LOW:HIGH[:log|pow2],
// choice:A,B); picking a setting fills in a range around its value in the
// form. Then the metric and its direction, the sampler, the pruner, how
// many trials and how many at once, and settings for the trials only. Every
// change is checked at once (studio/search_space.h, as the CLI checks it):
// what is wrong is listed and OK waits for it; a searched setting that the
// other settings override is said.
// Thread: the UI thread.

#include <QDialog>
#include <QStringList>

#include "studio/search_space.h"
#include "studio/train_config.h"

class QComboBox;
class QDialogButtonBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QSpinBox;
class QTableWidget;

namespace studio::ui {

class SearchDialog : public QDialog {
  Q_OBJECT

 public:
  SearchDialog(const TrainConfig& base, QWidget* parent = nullptr);

  // A row of the space; `range` "" fills in one around the form's value.
  void addParam(const QString& key, const QString& range = {});
  QTableWidget* table() const { return m_table; }
  // The search as it stands, checked (throws ConfigFileError saying what is
  // wrong), and as the CLI's arguments after `search --config FILE`.
  SearchSpec spec() const;
  QStringList cliArguments() const;
  // What is wrong now ("" when it can start), and the notes about settings
  // without effect.
  QString problems() const;
  QString warnings() const;

  QComboBox* metricBox() const { return m_metric; }
  QComboBox* sampler() const { return m_sampler; }
  QComboBox* pruner() const { return m_pruner; }
  QSpinBox* trials() const { return m_trials; }
  QSpinBox* parallel() const { return m_parallel; }
  QPlainTextEdit* trialSettings() const { return m_trialSettings; }
  QLineEdit* name() const { return m_name; }

 private:
  // A range around the form's value of a setting.
  QString suggestedRange(const QString& key) const;
  void recheck();

  TrainConfig m_base;
  QTableWidget* m_table;
  QComboBox *m_metric, *m_direction, *m_sampler, *m_pruner;
  QSpinBox *m_trials, *m_parallel;
  QPlainTextEdit* m_trialSettings;
  QLineEdit* m_name;
  QLabel *m_problems, *m_warnings;
  QDialogButtonBox* m_buttons;
};

}  // namespace studio::ui
