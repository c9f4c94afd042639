#include "ui/audit/audit_panel.h"

#include <QComboBox>
#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPixmap>
#include <QPushButton>
#include <QShortcut>
#include <QTableWidget>
#include <QTemporaryFile>
#include <QVBoxLayout>

#include <set>

#include <nlohmann/json.hpp>

#include "studio/csv_table.h"
#include "studio/errors.h"
#include "studio/file_io.h"
#include "studio/train_config.h"

namespace studio::ui {
namespace {

enum Column { Thumb, File, Kind, Given, Suggested, Detail, Decided, Columns };

// The rows of a CSV file the audit (or the review) wrote, as column -> value
// maps: none when the file is not there yet or cannot be read.
std::vector<std::map<QString, QString>> readRows(const QString& path) {
  std::vector<std::map<QString, QString>> rows;
  if (!QFileInfo(path).isFile()) return rows;
  try {
    const CsvTable t = readCsvTable(path.toStdString(), CsvHeader::first_row);
    for (const auto& cells : t.rows) {
      std::map<QString, QString> row;
      for (size_t i = 0; i < t.columns.size(); ++i)
        row[QString::fromStdString(t.columns[i])] = QString::fromStdString(cells[i]);
      rows.push_back(std::move(row));
    }
  } catch (const Error&) {
    // an empty or unreadable file lists nothing
  }
  return rows;
}

QString csvCell(const QString& s) { return QString::fromStdString(csvField(s.toStdString())); }

}  // namespace

AuditPanel::AuditPanel(QWidget* parent)
    : QWidget(parent),
      m_table(new QTableWidget(0, Columns)),
      m_summary(new QLabel),
      m_classes(new QComboBox),
      m_train(new QPushButton(tr("Train on corrected data"))),
      m_review(new QPushButton(tr("Review in the Label tab"))) {
  setObjectName("auditPanel");
  m_summary->setObjectName("auditSummary");
  m_summary->setWordWrap(true);
  m_summary->setText(
      tr("Run > Audit data… cross-validates the settings and lists the labels that look wrong and "
         "the test images copied into the training set."));
  m_table->setObjectName("auditTable");
  m_table->setHorizontalHeaderLabels(
      {tr(""), tr("File"), tr("Why"), tr("Given"), tr("Suggested"), tr("Score"), tr("Decision")});
  m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_table->setIconSize(QSize(48, 48));
  m_table->verticalHeader()->setDefaultSectionSize(52);
  m_table->horizontalHeader()->setSectionResizeMode(File, QHeaderView::Stretch);
  auto* relabel = new QPushButton(tr("Relabel to suggestion (R)"));
  auto* relabelTo = new QPushButton(tr("Relabel to"));
  auto* remove = new QPushButton(tr("Remove (Del)"));
  auto* keep = new QPushButton(tr("Keep (K)"));
  m_classes->setObjectName("auditClasses");
  m_train->setObjectName("auditTrain");
  m_train->setEnabled(false);
  connect(relabel, &QPushButton::clicked, this, [this] { decideSelected("relabel"); });
  connect(relabelTo, &QPushButton::clicked, this, [this] { decideSelected("relabel", m_classes->currentText()); });
  connect(remove, &QPushButton::clicked, this, [this] { decideSelected("remove"); });
  connect(keep, &QPushButton::clicked, this, [this] { decideSelected("keep"); });
  connect(m_train, &QPushButton::clicked, this, [this] { Q_EMIT trainCorrected(correctionsFile()); });
  m_review->setObjectName("auditReview");
  m_review->setToolTip(tr("An audit of a labels file: its flagged images in the Label tab, the suggestion proposed"));
  m_review->setEnabled(false);
  connect(m_review, &QPushButton::clicked, this, [this] {
    QMap<QString, QString> suggested;
    const QDir root(m_labelsRoot);
    for (const Suspect& s : m_suspects)
      if (!s.suggested.isEmpty()) suggested[root.relativeFilePath(QFileInfo(s.file).absoluteFilePath())] = s.suggested;
    Q_EMIT reviewLabels(m_labelsRoot, m_labelsFile, suggested);
  });
  for (auto [key, action] : {std::pair{Qt::Key_R, "relabel"}, {Qt::Key_Delete, "remove"}, {Qt::Key_K, "keep"}}) {
    auto* s = new QShortcut(QKeySequence(key), m_table);
    s->setContext(Qt::WidgetShortcut);
    const QString a = action;
    connect(s, &QShortcut::activated, this, [this, a] { decideSelected(a); });
  }
  auto* buttons = new QHBoxLayout;
  for (QWidget* w : std::initializer_list<QWidget*>{relabel, relabelTo, m_classes, remove, keep}) buttons->addWidget(w);
  buttons->addStretch();
  buttons->addWidget(m_train);
  // Beside the summary: the decisions' row is as wide as the window allows at 1280 px.
  auto* head = new QHBoxLayout;
  head->addWidget(m_summary, 1);
  head->addWidget(m_review, 0, Qt::AlignTop);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(head);
  layout->addLayout(buttons);
  layout->addWidget(m_table, 1);
}

AuditPanel::~AuditPanel() {
  if (running()) {
    m_process->terminate();  // the fold stops with a checkpoint; audit --resume continues it
    m_process->waitForFinished(30000);
  }
}

bool AuditPanel::running() const { return m_process && m_process->state() != QProcess::NotRunning; }

QString AuditPanel::correctionsFile() const { return m_dir.isEmpty() ? QString() : m_dir + "/corrections.csv"; }

bool AuditPanel::startAudit(const TrainConfig& config, int folds) {
  if (running()) {
    Q_EMIT message(tr("An audit is running"), true);
    return false;
  }
  m_settingsFile = std::make_unique<QTemporaryFile>(QDir::tempPath() + "/training-studio-audit-XXXXXX.json");
  if (!m_settingsFile->open()) {
    Q_EMIT message(tr("cannot write the audit's settings in %1").arg(QDir::tempPath()), true);
    return false;
  }
  m_settingsFile->close();
  try {
    saveConfigFile(config, m_settingsFile->fileName().toStdString());
  } catch (const Error& e) {
    Q_EMIT message(QString::fromStdString(e.what()), true);
    return false;
  }
  m_outDir = QDir(QString::fromStdString(config.output.dir)).absolutePath();
  const QStringList before = QDir(m_outDir).entryList({"*-audit-*"}, QDir::Dirs);
  QString cli = qEnvironmentVariable("STUDIO_CLI");
  if (cli.isEmpty()) cli = QCoreApplication::applicationDirPath() + "/training-studio-cli";
  m_process = std::make_unique<QProcess>();
  m_process->setProcessChannelMode(QProcess::MergedChannels);
  m_output.clear();
  connect(m_process.get(), &QProcess::readyRead, this, [this] { m_output += m_process->readAll(); });
  connect(m_process.get(), &QProcess::finished, this, [this, before](int code) {
    m_output += m_process->readAll();
    QStringList now = QDir(m_outDir).entryList({"*-audit-*"}, QDir::Dirs, QDir::Name);
    for (const QString& b : before) now.removeAll(b);
    if (code == 0 && !now.isEmpty()) {
      openAudit(m_outDir + "/" + now.last());
      Q_EMIT message(tr("audit done: %1").arg(summary()), false);
    } else {
      const QString last = m_output.trimmed().section('\n', -1);
      Q_EMIT message(code == 130 ? tr("audit stopped; training-studio-cli audit --resume continues it")
                                 : tr("audit ended with exit status %1: %2").arg(code).arg(last),
                     true);
    }
    Q_EMIT finished(code);
  });
  m_process->start(
      cli, {"audit", "--config", m_settingsFile->fileName(), "--folds", QString::number(folds), "--out", m_outDir});
  if (!m_process->waitForStarted(10000)) {
    Q_EMIT message(tr("cannot start %1: %2").arg(cli, m_process->errorString()), true);
    m_process.reset();
    return false;
  }
  m_summary->setText(tr("Auditing: %1 folds, each an ordinary run under %2…").arg(folds).arg(m_outDir));
  return true;
}

bool AuditPanel::openAudit(const QString& dir) {
  QFile report(dir + "/audit.json");
  if (!report.open(QIODevice::ReadOnly)) {
    Q_EMIT message(tr("%1 is not a finished audit (no audit.json)").arg(dir), true);
    return false;
  }
  const auto j = nlohmann::json::parse(report.readAll().toStdString(), nullptr, false);
  if (!j.is_object()) {
    Q_EMIT message(tr("%1/audit.json is not an audit's report").arg(dir), true);
    return false;
  }
  m_dir = QDir(dir).absolutePath();
  // An audit of a classifier on a labels file (data.targets_file) reviews in the Label tab.
  m_labelsRoot.clear();
  m_labelsFile.clear();
  try {  // the settings the audit ran with, read as every settings file is
    const TrainConfig c = loadConfigFile((m_dir + "/audit_settings.json").toStdString());
    if (c.task.kind == TaskKind::classification && c.data.format == DataFormat::image_folder &&
        !c.data.targets_file.empty()) {
      m_labelsRoot = QFileInfo(QString::fromStdString(c.data.root)).absoluteFilePath();
      m_labelsFile = QFileInfo(QString::fromStdString(c.data.targets_file)).absoluteFilePath();
    }
  } catch (const InputError&) {
    // an audit without readable settings has nothing to review in the Label tab
  }
  m_review->setEnabled(!m_labelsFile.isEmpty());
  m_classNames.clear();
  for (const auto& c : j.value("classes", nlohmann::json::array())) m_classNames << QString::fromStdString(c);
  const std::string metric = j.value("metric", std::string("accuracy"));
  const auto score = j.value(metric, nlohmann::json::object());
  m_accuracy = QString("%1 %2 ± %3")
                   .arg(metric == "r2"               ? tr("R²")
                        : metric == "label_accuracy" ? tr("label accuracy")
                                                     : tr("accuracy"))
                   .arg(score.value("mean", 0.0), 0, 'f', 4)
                   .arg(score.value("std", 0.0), 0, 'f', 4);
  m_classes->clear();
  m_classes->addItems(m_classNames);
  // Near pairs say little when the features find more of them than there
  // are images (the audit's note): then only exact copies are listed.
  m_featureNote = QString::fromStdString(j.value("feature_note", std::string()));
  m_suspects.clear();
  // Classes: given and suggested class; a regression: a target's value and
  // its out-of-fold prediction; multi-label: a label given or not.
  // Each with its nearest other example in the model's features.
  for (auto& r : readRows(m_dir + "/label_issues.csv")) {
    const QString nearest = r["nearest"].isEmpty() ? QString()
                                                   : tr("; nearest %1 (%2)")
                                                         .arg(QFileInfo(r["nearest"]).fileName())
                                                         .arg(r["nearest_similarity"].toDouble(), 0, 'f', 3);
    if (r.count("residual_z"))
      m_suspects.push_back({r["file"], tr("value of %1").arg(r["target"]), r["given"], r["suggested"],
                            tr("%1 sd").arg(r["residual_z"].toDouble(), 0, 'f', 1) + nearest});
    else if (r.count("label"))
      m_suspects.push_back({r["file"], tr("label %1").arg(r["label"]), r["given"] == "1" ? tr("given") : tr("absent"),
                            r["suggested"] == "1" ? tr("given") : tr("absent"),
                            tr("p = %1").arg(r["self_confidence"].toDouble(), 0, 'f', 3) + nearest});
    else
      m_suspects.push_back({r["file"], tr("label"), r["given"], r["suggested"],
                            tr("p = %1").arg(r["self_confidence"].toDouble(), 0, 'f', 3) + nearest});
  }
  std::set<QString> listed;  // a training file once, with its first (most similar) test file
  for (const auto& r : readRows(m_dir + "/duplicates.csv")) {
    const QString kind = r.count("kind") ? r.at("kind") : QString();
    if (!kind.endsWith("train-test")) continue;  // a training copy of a test file: leakage
    if ((kind != "train-test" && !m_featureNote.isEmpty()) || !listed.insert(r.at("first")).second) continue;
    const QString given = QFileInfo(r.at("first")).dir().dirName();
    m_suspects.push_back({r.at("first"), kind == "train-test" ? tr("copy of a test file") : tr("near a test file"),
                          given, QString(),
                          tr("%1: %2").arg(QString::number(r.at("similarity").toDouble(), 'f', 3),
                                           QFileInfo(r.at("second")).fileName())});
  }
  m_decisions.clear();
  for (const auto& r : readRows(correctionsFile()))
    if (r.count("file") && r.count("action"))
      m_decisions[r.at("file")] = {r.at("action"), r.count("label") ? r.at("label") : QString()};
  m_table->setRowCount(static_cast<int>(m_suspects.size()));
  for (int row = 0; row < m_table->rowCount(); ++row) showRow(row);
  if (m_table->rowCount() > 0) m_table->selectRow(0);
  updateSummary();
  return true;
}

void AuditPanel::showRow(int row) {
  const Suspect& s = m_suspects[static_cast<size_t>(row)];
  auto set = [&](int column, const QString& text) {
    auto* item = new QTableWidgetItem(text);
    m_table->setItem(row, column, item);
    return item;
  };
  if (!m_table->item(row, Thumb)) {
    auto* thumb = set(Thumb, QString());
    const QPixmap image(s.file);
    if (!image.isNull()) thumb->setIcon(QIcon(image.scaled(48, 48, Qt::KeepAspectRatio, Qt::FastTransformation)));
  }
  set(File, s.file);
  set(Kind, s.kind);
  set(Given, s.given);
  set(Suggested, s.suggested);
  set(Detail, s.detail);
  const auto d = m_decisions.find(s.file);
  set(Decided, d == m_decisions.end()          ? QString()
               : d->second.action == "relabel" ? tr("relabel to %1").arg(d->second.label)
                                               : d->second.action);
}

void AuditPanel::decide(int row, const QString& action, const QString& label) {
  if (row < 0 || row >= m_table->rowCount()) return;
  const Suspect& s = m_suspects[static_cast<size_t>(row)];
  QString to = label;
  if (action == "relabel" && to.isEmpty()) to = s.suggested;
  if (action == "relabel" && !m_classNames.contains(to)) {
    Q_EMIT message(m_classNames.isEmpty()
                       ? tr("%1: this data has no classes to relabel to; remove it, keep it, or correct its value in "
                            "your labels file")
                             .arg(s.file)
                       : tr("%1 has no suggested class: choose one and press Relabel to").arg(s.file),
                   true);
    return;
  }
  const QString file = s.file;
  m_decisions[file] = {action, action == "relabel" ? to : QString()};
  writeCorrections();
  // One decision per file: every row of it (a label issue and a copy of a
  // test file, say) shows the one corrections.csv holds (issue 60, item 2).
  for (int other = 0; other < m_table->rowCount(); ++other)
    if (m_suspects[static_cast<size_t>(other)].file == file) showRow(other);
  updateSummary();
}

void AuditPanel::decideSelected(const QString& action, const QString& label) {
  const int row = m_table->currentRow();
  decide(row, action, label);
  if (row + 1 < m_table->rowCount()) m_table->selectRow(row + 1);  // on to the next suspect
}

void AuditPanel::writeCorrections() {
  QString text = "file,action,label\n";
  for (const auto& [file, d] : m_decisions) text += csvCell(file) + "," + d.action + "," + csvCell(d.label) + "\n";
  try {
    writeFileAtomically(correctionsFile().toStdString(), text.toStdString());
  } catch (const Error& e) {
    Q_EMIT message(QString::fromStdString(e.what()), true);
  }
}

QString AuditPanel::summary() const {
  int labels = 0, leaks = 0;
  for (const auto& s : m_suspects)
    (s.kind == tr("copy of a test file") || s.kind == tr("near a test file") ? leaks : labels)++;
  // Rows, not files: a file listed twice is decided once, on both rows.
  int decided = 0;
  for (const auto& s : m_suspects) decided += m_decisions.count(s.file) ? 1 : 0;
  return tr("%1 labels look wrong, %2 training examples copy or nearly copy a test example; cross-validated %3; "
            "%4 of %5 listed decided, %6 files (corrections.csv, your files are not changed)")
      .arg(labels)
      .arg(leaks)
      .arg(m_accuracy)
      .arg(decided)
      .arg(m_suspects.size())
      .arg(m_decisions.size());
}

void AuditPanel::updateSummary() {
  m_summary->setText(m_dir + "\n" + summary() + (m_featureNote.isEmpty() ? QString() : "\n" + m_featureNote));
  m_train->setEnabled(!m_decisions.empty());
}

}  // namespace studio::ui
