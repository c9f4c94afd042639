#pragma once
// The Audit tab: Run > Audit data… runs `training-studio-cli audit` on the
// form's settings (its folds as ordinary runs, in a process of its own), then
// the review: the suspects of the audit's folder, lowest self-confidence
// first (the labels that look wrong, then the test files copied into the
// training set), each with its thumbnail, its given and suggested class and
// its decision. R relabels to the suggestion, Delete removes, K keeps, or
// "Relabel to" a chosen class. Each decision is written at once to the
// audit folder's corrections.csv (never to the data's files); "Train on
// corrected data" names that file in data.corrections.
// Thread: UI thread.

#include <QMap>
#include <QProcess>
#include <QStringList>
#include <QWidget>

#include <map>
#include <memory>

#include "studio/train_config.h"

class QComboBox;
class QLabel;
class QPushButton;
class QTableWidget;
class QTemporaryFile;

namespace studio::ui {

class AuditPanel : public QWidget {
  Q_OBJECT

 public:
  explicit AuditPanel(QWidget* parent = nullptr);
  ~AuditPanel() override;

  // Starts the audit of these settings (folds) under their output.dir;
  // false, said, when it cannot.
  bool startAudit(const TrainConfig& config, int folds);
  bool running() const;
  // Shows an audit folder's suspects and the decisions already in its
  // corrections.csv; false, said, when it is not an audit's.
  bool openAudit(const QString& dir);
  QString auditFolder() const { return m_dir; }
  QString correctionsFile() const;

  // A decision about a row: "relabel" (to label; empty: the suggestion),
  // "remove" or "keep"; written at once.
  void decide(int row, const QString& action, const QString& label = {});
  QTableWidget* table() const { return m_table; }
  QString summary() const;

 Q_SIGNALS:
  void message(const QString& text, bool error);
  void finished(int exitCode);
  // "Train on corrected data": the corrections file for data.corrections.
  void trainCorrected(const QString& correctionsFile);
  // "Review in the Label tab" (an audit of a labels file, the Label tab's):
  // its folder, its labels file, and each flagged image (relative to the
  // folder) with the class the audit suggests.
  void reviewLabels(const QString& folder, const QString& labelsFile, const QMap<QString, QString>& suggested);

 private:
  struct Suspect {
    QString file, kind, given, suggested, detail;
  };
  struct Decision {
    QString action, label;
  };
  void decideSelected(const QString& action, const QString& label = {});
  void writeCorrections();
  void showRow(int row);
  void updateSummary();

  QTableWidget* m_table;
  QLabel* m_summary;
  QComboBox* m_classes;
  QPushButton* m_train;
  QPushButton* m_review;
  QString m_labelsRoot, m_labelsFile;  // the audited labels file's folder and file ("" for other data)
  std::unique_ptr<QProcess> m_process;
  std::unique_ptr<QTemporaryFile> m_settingsFile;
  QString m_outDir, m_dir, m_accuracy, m_output, m_featureNote;
  QStringList m_classNames;
  std::vector<Suspect> m_suspects;
  std::map<QString, Decision> m_decisions;  // file -> decision
};

}  // namespace studio::ui
