#include "ui/runs/fork_dialog.h"

#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QPlainTextEdit>
#include <QRegularExpression>

#include <algorithm>

#include "studio/run_layout.h"
#include "studio/settings_schema.h"
#include "ui/common/form_dialog.h"

namespace studio::ui {
namespace {

ForkOptions optionsOf(const QComboBox* from, const QPlainTextEdit* edits) {
  ForkOptions fork;
  fork.from = from->currentData().toString().toStdString();
  fork.overrides = settingLines(edits->toPlainText());
  return fork;
}

// The notes of the typed changes that these settings override.
QString effectNotes(const TrainConfig& run, const ForkOptions& fork) {
  TrainConfig child = run;
  std::vector<std::string> applied;
  for (const auto& o : fork.overrides) {
    try {
      applyOverride(child, o);
      applied.push_back(o);
    } catch (const std::exception&) {
      // A line that does not parse is said when OK is pressed.
    }
  }
  if (applied.empty()) return QString();  // no change typed: nothing to say (an empty list means every field)
  QStringList notes;
  for (const auto& w : settingsWithoutEffect(child, applied)) notes << QString::fromStdString(w.text());
  return notes.join('\n');
}

}  // namespace

QString forkMessageInWindowWords(const QString& engineMessage) {
  QString text = engineMessage;
  text.replace(QRegularExpression(QStringLiteral("\\(--set (\\S+?)\\)")), QStringLiteral("(\\1 in Changes)"));
  text.replace(QRegularExpression(QStringLiteral("--set (\\S+)")), QStringLiteral("\\1 in Changes"));
  text.replace(QRegularExpression(QStringLiteral("\\bfork --from (\\S+)")), QStringLiteral("the fork from \\1"));
  if (!text.isEmpty()) text[0] = text[0].toUpper();
  return text;
}

std::optional<ForkOptions> askForkOptions(QWidget* parent, const QString& runDir, const TrainConfig& formConfig,
                                          int64_t liveStep, const TryFork& tryFork, QString* error) {
  TrainConfig run;
  try {
    run = loadConfigFile((runDir + "/" + run_files::kSettings).toStdString());
  } catch (const std::exception& e) {
    *error = QString::fromStdString(e.what());
    return std::nullopt;
  }
  QDialog dialog(parent);
  dialog.setObjectName("forkDialog");
  dialog.setWindowTitle(QObject::tr("Fork %1").arg(QFileInfo(runDir).fileName()));
  auto* form = new QFormLayout(&dialog);
  auto* from = new QComboBox;
  from->setObjectName("forkFrom");
  const bool live = liveStep >= 0;
  if (live) {
    from->addItem(QObject::tr("its current weights (step %1; it stays paused)").arg(liveStep), "last");
  } else {
    from->addItem(QObject::tr("last checkpoint"), "last");
    if (QFile::exists(runDir + "/checkpoints/best.ckpt")) from->addItem(QObject::tr("best checkpoint"), "best");
  }
  QStringList steps = QDir(runDir + "/checkpoints").entryList({"step-*.ckpt"}, QDir::Files);
  std::sort(steps.begin(), steps.end(), [](const QString& a, const QString& b) {
    return a.mid(5).chopped(5).toLongLong() < b.mid(5).chopped(5).toLongLong();
  });
  if (!live)
    for (const QString& f : steps) from->addItem(f.chopped(5), f.chopped(5));
  QStringList changes;
  for (const auto& a : settingsAssignments(settingsChanges(run, formConfig))) {
    const QString line = QString::fromStdString(a);
    if (settingForkable(a.substr(0, a.find('=')))) changes << line;
  }
  auto* edits = new QPlainTextEdit(changes.join("\n"));
  edits->setObjectName("forkChanges");
  edits->setPlaceholderText(QObject::tr("one setting per line, e.g.\noptimizer.lr=0.01\ntrain.epochs=6"));
  auto* notes = new QLabel;  // changes these settings override
  notes->setObjectName("forkNotes");
  notes->setWordWrap(true);
  notes->setStyleSheet("color: #a0620a");
  form->addRow(
      new QLabel(QObject::tr("A new run from this run's weights with these settings changed (from the "
                             "form; edit them). The model and the data stay the run's.")));
  form->addRow(QObject::tr("From"), from);
  form->addRow(QObject::tr("Changes"), edits);
  form->addRow(notes);
  auto showNotes = [&] {
    const QString text = effectNotes(run, optionsOf(from, edits));
    notes->setText(text.isEmpty() ? QString() : QObject::tr("Note: %1").arg(text));
    notes->setVisible(!text.isEmpty());
  };
  showNotes();
  QObject::connect(edits, &QPlainTextEdit::textChanged, &dialog, showNotes);
  std::optional<ForkOptions> started;
  runCheckedFormDialog(dialog, form, "forkError", [&] {  // the reason a fork was refused, in the window's words
    const ForkOptions fork = optionsOf(from, edits);
    const QString why = tryFork(fork);
    if (why.isEmpty()) started = fork;
    return forkMessageInWindowWords(why);
  });
  return started;
}

}  // namespace studio::ui
