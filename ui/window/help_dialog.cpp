#include "ui/window/help_dialog.h"

#include <QCoreApplication>
#include <QDialogButtonBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QPushButton>
#include <QRegularExpression>
#include <QTextBlock>
#include <QTextBrowser>
#include <QVBoxLayout>

namespace studio::ui {

namespace {

QString guideHtml() {
  const auto link = [](const char* section) {
    return QStringLiteral("<a href=\"guide:%1\">%1</a>").arg(QString::fromUtf8(section).toHtmlEscaped());
  };
  return QCoreApplication::translate(
             "HelpDialog",
             "<h2>Training Studio in a minute</h2>"
             "<p>Edit the settings on the left (a bad value says why under its field, and Start waits until none is "
             "left), press <b>Start</b> (F5), and watch the curves. Every run is a folder under the output folder; the "
             "<b>Runs</b> list below shows them. More: %1.</p>"
             "<h3>The charts</h3><ul>"
             "<li><b>Loss</b>: the training loss of each step (faint), its moving average (the weight is <i>Loss "
             "smoothing</i>) and the evaluation loss (dots). A marker says where the learning rate changed, a step was "
             "not finite, or the loss started climbing (<i>diverging?</i>).</li>"
             "<li><b>Evaluation accuracy · R\u00b2</b>: accuracy (or a regression's R\u00b2) on the validation split "
             "at "
             "each evaluation, and the test split at the end. The Evaluation tab shows the confusion matrix, or a "
             "regression's predicted-against-actual plot and residuals.</li>"
             "<li><b>Learning rate</b>: the planned schedule (dashed, drawn while you edit) and the rate the run "
             "used.</li>"
             "<li><b>Throughput</b>: samples per second. <b>Memory</b>: the CUDA allocator's allocated, reserved and "
             "peak memory on a GPU, the process's resident memory on the CPU.</li>"
             "<li><b>Gradient norm</b>: before clipping. <b>Loss scale</b>: fp16 runs' dynamic loss scale and skipped "
             "steps.</li>"
             "<li><b>Utilisation</b>: while a run trains, this process's share of the CPU and, with NVIDIA's driver, "
             "the GPU's utilisation and memory.</li></ul>"
             "<h3>The mouse on a chart</h3><ul>"
             "<li>Drag to pan, wheel to zoom, double-click to follow the run again; right-click for log scale and "
             "PNG/PDF.</li>"
             "<li>The read-out shows every curve's value at the step under the mouse; with <i>Linked</i> on, every "
             "chart shows that step and zooms with the others. The <i>x</i> box counts steps, epochs, samples seen or "
             "wall time.</li>"
             "<li>A click on a legend entry hides its curve; another shows it.</li></ul>"
             "<h3>Runs</h3><p>Select a run to draw it, several to compare them (a colour per run). Resume a stopped "
             "run, "
             "continue a finished one for more epochs, fork one with changed settings, queue the form's settings, "
             "export a run. More: %2, %3.</p>"
             "<h3>Predict</h3><p>Select a finished run, open the <b>Predict</b> tab and drop photos or a folder on it: "
             "each file's class and confidence, sortable and filtered by class, and for the selected image where the "
             "model looked (Grad-CAM). Save CSV keeps them. More: %7.</p>"
             "<h3>Search</h3><p><b>Run &gt; Search…</b> picks settings to vary and their ranges; Optuna tries "
             "combinations as runs, learns from them and stops hopeless ones early. The <b>Search</b> dock shows the "
             "trials, the best so far, the trials across every setting (drag along an axis to select some) and which "
             "setting mattered; <b>Train best</b> trains the winner. More: %8.</p>"
             "<h3>Shortcuts</h3><table cellspacing=\"6\">"
             "<tr><td>F5</td><td>Start</td></tr><tr><td>F6</td><td>Pause</td></tr><tr><td>F7</td><td>Resume</td></tr>"
             "<tr><td>Shift+F5</td><td>Stop (writes a checkpoint)</td></tr>"
             "<tr><td>Ctrl+Shift+S</td><td>Save a checkpoint now</td></tr>"
             "<tr><td>Ctrl+Z / Ctrl+Shift+Z</td><td>Undo / redo a settings edit</td></tr>"
             "<tr><td>Ctrl+O / Ctrl+S</td><td>Load / save settings</td></tr>"
             "<tr><td>Ctrl+E</td><td>Export the selected run</td></tr><tr><td>F1</td><td>This guide</td></tr></table>"
             "<p>Settings, techniques and files: %4, %5, %6.</p>")
      .arg(link("The studio"), link("The experiment loop: run, watch, fork, compare, continue"),
           link("Continue and fork"), link("Settings"), link("What a run leaves on disk"),
           link("Your own data and model"), link("Predictions on new files"), link("A search that learns: Optuna"));
}

}  // namespace

HelpDialog::HelpDialog(QWidget* parent) : QDialog(parent), m_browser(new QTextBrowser) {
  setObjectName("guide");
  setWindowTitle(tr("Training Studio guide"));
  m_browser->setOpenLinks(false);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(m_browser);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
  QPushButton* guide = buttons->addButton(tr("Guide"), QDialogButtonBox::ActionRole);
  layout->addWidget(buttons);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::close);
  connect(guide, &QPushButton::clicked, this, &HelpDialog::showGuide);
  connect(m_browser, &QTextBrowser::anchorClicked, this, [this](const QUrl& url) {
    if (url.scheme() == "guide") showSection(url.path());
  });
  resize(720, 640);
  showGuide();
}

void HelpDialog::showGuide() { m_browser->setHtml(guideHtml()); }

QStringList HelpDialog::headingsOf(const QString& path) {
  QFile f(path);
  QStringList found;
  if (!f.open(QIODevice::ReadOnly)) return found;
  static const QRegularExpression heading("^#{2,3} (.+)$");
  bool fenced = false;
  for (const QString& line : QString::fromUtf8(f.readAll()).split('\n')) {
    if (line.startsWith("```")) fenced = !fenced;
    if (fenced) continue;
    const auto m = heading.match(line.trimmed());
    if (m.hasMatch()) found << m.captured(1).remove('`').trimmed();
  }
  return found;
}

QStringList HelpDialog::documentPaths() {
  const QDir app(QCoreApplication::applicationDirPath());
  for (const char* relative : {"../../share/doc/training-studio", "../../docs"}) {
    QStringList paths;
    for (const char* name : {"user-guide.md", "cli.md", "run-folder.md"}) {
      const QFileInfo f(app.filePath(QString::fromUtf8(relative) + "/" + name));
      if (f.isFile()) paths << f.canonicalFilePath();
    }
    if (!paths.isEmpty()) return paths;
  }
  return {};
}

QStringList HelpDialog::sections() {
  QStringList all;
  for (const QString& path : documentPaths()) all << headingsOf(path);
  return all;
}

bool HelpDialog::showSection(const QString& section) {
  const QStringList paths = documentPaths();
  if (paths.isEmpty()) {
    m_browser->setHtml(tr("<p>The user guide is not next to this program (looked in %1).</p>")
                           .arg(QDir(QCoreApplication::applicationDirPath())
                                    .filePath("../../share/doc/training-studio")
                                    .toHtmlEscaped()));
    return false;
  }
  QString path = paths.front();
  for (const QString& p : paths)
    if (!section.isEmpty() && headingsOf(p).contains(section.trimmed())) path = p;
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return false;
  m_browser->setMarkdown(QString::fromUtf8(f.readAll()));
  if (section.isEmpty()) return true;
  // The section's heading block, shown at the top.
  for (QTextBlock b = m_browser->document()->begin(); b.isValid(); b = b.next()) {
    if (b.blockFormat().headingLevel() > 0 && b.text().trimmed() == section.trimmed()) {
      QTextCursor end(m_browser->document());
      end.movePosition(QTextCursor::End);
      m_browser->setTextCursor(end);
      m_browser->ensureCursorVisible();
      m_browser->setTextCursor(QTextCursor(b));
      m_browser->ensureCursorVisible();
      return true;
    }
  }
  return false;
}

}  // namespace studio::ui
