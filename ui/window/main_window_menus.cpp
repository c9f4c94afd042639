// MainWindow's menu bar: File, Edit, Run, View and Help (the user's
// documents by section). The window itself: main_window.cpp.
#include "ui/window/main_window.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QDockWidget>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QMenuBar>
#include <QMessageBox>
#include <QSettings>
#include <algorithm>

#include "studio/log.h"
#include "studio/model_kinds.h"
#include "studio/run_layout.h"
#include "ui/audit/audit_panel.h"
#include "ui/charts/metric_chart.h"
#include "ui/charts/plots_panel.h"
#include "ui/common/theme.h"
#include "ui/data/data_panel.h"
#include "ui/label/label_panel.h"
#include "ui/runs/runs_panel.h"
#include "ui/search/study_panel.h"
#include "ui/settings/settings_panel.h"
#include "ui/window/help_dialog.h"
#include "ui/window/notifier.h"
#include "ui/window/run_lifecycle.h"
#include "ui/window/run_toolbar.h"

namespace studio::ui {

void MainWindow::buildMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("Load settings…"), QKeySequence::Open, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Load settings"), QString(), tr("Settings (*.json)"));
    if (!path.isEmpty()) loadSettingsFile(path);
  });
  file->addAction(tr("Save settings…"), QKeySequence::Save, this, [this] {
    const QString path = QFileDialog::getSaveFileName(this, tr("Save settings"),
                                                      QString::fromStdString(m_settings->config().name) + ".json",
                                                      tr("Settings (*.json)"));
    QString error;
    if (!path.isEmpty() && !m_settings->saveFile(path, &error)) showFailure(tr("Settings not saved"), error);
  });
  file->addAction(tr("Export run…"), QKeySequence(Qt::CTRL | Qt::Key_E), this, [this] {
    const QStringList sel = m_runs->selectedRuns();
    const QString dir = sel.size() == 1 ? sel.front() : m_lifecycle->liveRun();
    if (dir.isEmpty())
      showMessage(tr("Select one run in the Runs list to export it."), true);
    else
      exportSelectedRun(dir);
  });
  file->addAction(tr("Chart export size…"), this, [this] {
    const QStringList sizes{"1200 x 700", "1600 x 900", "1920 x 1080", "2400 x 1400", "3200 x 1800"};
    const QString now = QString("%1 x %2").arg(m_chartExportSize.width()).arg(m_chartExportSize.height());
    bool ok = false;
    const QString chosen = QInputDialog::getItem(this, tr("Chart export size"), tr("Exported charts (pixels):"), sizes,
                                                 std::max<int>(0, static_cast<int>(sizes.indexOf(now))), false, &ok);
    const QStringList wh = chosen.split(" x ");
    if (ok && wh.size() == 2) setChartExportSize(QSize(wh[0].toInt(), wh[1].toInt()));
  });
  QMenu* recent = file->addMenu(tr("Recent runs"));
  connect(recent, &QMenu::aboutToShow, this, [this, recent] {
    recent->clear();
    for (const QString& dir : QSettings().value("runs/recent").toStringList()) {
      if (!QFile::exists(dir + "/" + run_files::kSettings)) continue;  // moved or deleted since
      recent->addAction(QFileInfo(dir).fileName(), this, [this, dir] {
        m_runs->setRunsDir(QFileInfo(dir).absolutePath());
        m_runs->selectRuns({dir});
      });
    }
    if (recent->isEmpty()) recent->addAction(tr("(none yet)"))->setEnabled(false);
  });
  file->addSeparator();
  file->addAction(tr("Quit"), QKeySequence::Quit, this, &QWidget::close);

  QMenu* edit = menuBar()->addMenu(tr("&Edit"));
  edit->addAction(m_settings->undoAction());
  edit->addAction(m_settings->redoAction());

  QMenu* run = menuBar()->addMenu(tr("&Run"));
  for (QAction* a : {m_toolbar->startAction(), m_toolbar->pauseAction(), m_toolbar->resumeAction(),
                     m_toolbar->stopAction(), m_toolbar->saveAction()})
    run->addAction(a);
  run->addSeparator();
  run->addAction(tr("Find learning rate…"), this, [this] { openLrFind(); });
  run->addAction(tr("Find largest batch…"), this, [this] { openBatchFind(); });
  run->addAction(tr("Search…"), this, [this] { openSearch(); });
  run->addAction(tr("Audit data…"), this, [this] {
    bool ok = false;
    const int folds =
        QInputDialog::getInt(this, tr("Audit data"),
                             tr("Cross-validation folds (each an ordinary run of these settings):"), 5, 2, 20, 1, &ok);
    if (ok && m_audit->startAudit(m_settings->config(), folds)) m_tabs->setCurrentWidget(m_audit);
  });
  connect(m_audit, &AuditPanel::message, this, [this](const QString& text, bool error) {
    if (error)
      showMessage(text, true);
    else
      log::info(text.toStdString());
  });
  connect(m_label, &LabelPanel::message, this, [this](const QString& text, bool error) {
    if (error)
      showMessage(text, true);
    else
      log::info(text.toStdString());
  });
  // The Label tab's proposals and order come from the run chosen in the Runs dock.
  m_label->setRunChooser([this] {
    const QStringList runs = m_runs->selectedRuns();
    return runs.size() == 1 ? runs.front() : QString();
  });
  // Boxes (a COCO file) train a detector on data.annotations; classes a classifier on data.targets_file.
  connect(m_label, &LabelPanel::trainOnLabels, this, [this](const QString& folder, const QString& labels) {
    const bool boxes = labels.endsWith(".json", Qt::CaseInsensitive);
    const bool detector = std::ranges::count(detectorKinds(), m_settings->config().model.kind) > 0;
    m_settings->applyFieldText("task.kind", boxes ? "detection" : "classification");
    if (boxes != detector)  // the model each kind of label needs: the form's defaults for it
      m_settings->applyFieldText("model.kind", boxes ? "fasterrcnn_mobilenet_v3_large_320_fpn" : "cnn");
    for (const auto& [field, value] : {std::pair<const char*, QString>{"data.format", "image_folder"},
                                       {"data.root", folder},
                                       {boxes ? "data.annotations" : "data.targets_file", labels},
                                       {boxes ? "data.targets_file" : "data.annotations", ""},
                                       {"data.label_column", ""}})
      m_settings->applyFieldText(field, value);
    m_tabs->setCurrentWidget(m_data);
  });
  connect(m_audit, &AuditPanel::reviewLabels, this,
          [this](const QString& folder, const QString& labels, const QMap<QString, QString>& suggested) {
            if (m_label->review(folder, labels, suggested)) m_tabs->setCurrentWidget(m_label);
          });
  connect(m_audit, &AuditPanel::trainCorrected, this, [this](const QString& file) {
    m_settings->applyFieldText("data.corrections", file);
    m_tabs->setCurrentWidget(m_data);
  });
  run->addAction(tr("Join a study…"), this, [this] {
    auto* dock = findChild<QDockWidget*>("searchDock");
    dock->show();
    dock->raise();
    m_study->askToJoin();
  });

  QMenu* view = menuBar()->addMenu(tr("&View"));
  for (QDockWidget* d : findChildren<QDockWidget*>()) view->addAction(d->toggleViewAction());
  view->addSeparator();
  QMenu* theme = view->addMenu(tr("Theme"));
  auto* group = new QActionGroup(this);
  const QString current = QSettings().value("view/theme", "system").toString();
  for (Theme t : {Theme::System, Theme::Light, Theme::Dark}) {
    QAction* a = theme->addAction(t == Theme::System ? tr("Desktop") : t == Theme::Light ? tr("Light") : tr("Dark"));
    a->setCheckable(true);
    a->setChecked(m_restore && themeName(t) == current);
    group->addAction(a);
    connect(a, &QAction::triggered, this, [t] {
      applyTheme(t);
      QSettings().setValue("view/theme", themeName(t));
    });
  }
  view->addAction(tr("Reset chart views"), this, [this] {
    for (auto* c : m_plots->charts()) c->resetView();
  });
  view->addSeparator();
  view->addAction(m_notifier->action());

  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("Guide"), QKeySequence::HelpContents, this, [this] { openGuide(); });
  // One menu per document (docs/user-guide.md, cli.md, run-folder.md), each
  // listing its sections.
  const QStringList documents = HelpDialog::documentPaths();
  for (const QString& path : documents) {
    const QString name = QFileInfo(path).fileName();
    QMenu* menu = help->addMenu(name == "cli.md"          ? tr("Command line")
                                : name == "run-folder.md" ? tr("Run folder")
                                                          : tr("User guide"));
    menu->setObjectName("docMenu-" + QFileInfo(path).baseName());
    for (const QString& section : HelpDialog::headingsOf(path))
      menu->addAction(section, this, [this, section] { openGuide()->showSection(section); });
  }
  if (documents.isEmpty()) help->addAction(tr("(no user guide next to this program)"))->setEnabled(false);
  help->addSeparator();
  help->addAction(tr("About Training Studio"), this, [this] {
    QMessageBox::about(this, tr("About Training Studio"),
                       tr("Training Studio %1\nTrains PyTorch models with LibTorch; every speed and memory "
                          "technique is a setting.")
                           .arg(QApplication::applicationVersion()));
  });
}

}  // namespace studio::ui
