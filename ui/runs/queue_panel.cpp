#include "ui/runs/queue_panel.h"

#include <QDialog>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QGridLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <algorithm>

#include "ui/common/form_dialog.h"
#include "ui/runs/run_catalog.h"

namespace studio::ui {
namespace {

enum Column { Position, Name, Status, Given, Model, Columns };

QPushButton* button(const QString& text, const char* name, const QString& tip) {
  auto* b = new QPushButton(text);
  b->setObjectName(name);
  b->setToolTip(tip);
  return b;
}

}  // namespace

QueuePanel::QueuePanel(QWidget* parent)
    : QWidget(parent),
      m_list(new QTreeWidget),
      m_problem(new QLabel),
      m_up(button(tr("Up"), "queueUp", tr("Run the selected item one place earlier."))),
      m_down(button(tr("Down"), "queueDown", tr("Run the selected item one place later."))),
      m_remove(button(tr("Remove"), "queueRemove", tr("Take the selected item out of the queue."))),
      m_edit(button(tr("Edit…"), "queueEdit", tr("Change the selected item's settings (key=value lines)."))),
      m_runNow(button(tr("Run now"), "queueRunNow", tr("Run the selected item now, before the others."))),
      m_runAll(button(tr("Run queue"), "queueRunAll", tr("Run the queued items one after another."))) {
  auto* top = new QVBoxLayout(this);
  top->setContentsMargins(4, 4, 4, 4);
  m_list->setObjectName("queueList");
  m_list->setRootIsDecorated(false);
  m_list->setHeaderLabels({tr("#"), tr("Name"), tr("Status"), tr("Settings given"), tr("Model")});
  m_list->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
  m_list->header()->setStretchLastSection(true);
  top->addWidget(m_list, 1);
  m_problem->setObjectName("queueProblem");
  m_problem->setWordWrap(true);
  m_problem->hide();
  top->addWidget(m_problem);
  // Two rows: the dock shares the bottom with the Runs list (the window
  // fits a 1280-pixel screen).
  auto* buttons = new QGridLayout;
  int at = 0;
  for (QPushButton* b : {m_up, m_down, m_remove, m_edit, m_runNow, m_runAll}) {
    buttons->addWidget(b, at / 3, at % 3);
    ++at;
  }
  buttons->setColumnStretch(3, 1);
  top->addLayout(buttons);
  connect(m_list, &QTreeWidget::itemSelectionChanged, this, &QueuePanel::updateButtons);
  connect(m_up, &QPushButton::clicked, this, [this] { moveSelected(-1); });
  connect(m_down, &QPushButton::clicked, this, [this] { moveSelected(1); });
  connect(m_remove, &QPushButton::clicked, this, [this] { removeSelected(); });
  connect(m_edit, &QPushButton::clicked, this, &QueuePanel::askEdit);
  connect(m_runNow, &QPushButton::clicked, this, [this] {
    if (const QueueItem* item = selectedItem(); item && item->status == QueueStatus::queued)
      Q_EMIT runNowRequested(item->id);
  });
  connect(m_runAll, &QPushButton::clicked, this, &QueuePanel::runAllRequested);
  updateButtons();
}

void QueuePanel::setQueueFile(const QString& path) {
  if (path == m_file) return;
  m_file = path;
  refresh();
}

void QueuePanel::refresh() {
  const int64_t selected = selectedId();
  m_items.clear();
  m_problem->hide();
  try {
    if (!m_file.isEmpty()) m_items = loadQueue(m_file.toStdString());
  } catch (const std::exception& e) {
    m_problem->setText(QString::fromStdString(e.what()));
    m_problem->show();
  }
  m_list->clear();
  // What tells the items apart: a grid item's label, else the settings whose
  // values differ between the queued items, as the Runs list finds them (two
  // items differing only in train.epochs showed the same empty cell).
  std::vector<QMap<QString, QString>> settings;
  for (const QueueItem& q : m_items) settings.push_back(settingsText(q.config));
  const QStringList differ = differingSettings(settings);
  // Nothing tells the items apart (one item from the form): the settings it
  // gives beside the defaults, the first few (issue 60: the cell was empty).
  const QMap<QString, QString> defaults = settingsText(TrainConfig{});
  const auto besideDefaults = [&](const QMap<QString, QString>& s) {
    QStringList out;
    for (auto it = s.begin(); it != s.end(); ++it)
      if (it.key() != "name" && it.key() != "output.dir" && defaults.value(it.key()) != it.value())
        out << it.key() + "=" + it.value();
    return out;
  };
  int position = 0;
  size_t index = 0;
  for (const QueueItem& q : m_items) {
    QStringList given;
    for (const QString& key : differ) given << key + "=" + settings[index].value(key);
    const QStringList all = given.isEmpty() ? besideDefaults(settings[index]) : given;
    if (given.isEmpty())
      given = all.mid(0, 4) + (all.size() > 4 ? QStringList{tr("… %1 more").arg(all.size() - 4)} : QStringList{});
    ++index;
    auto* row = new QTreeWidgetItem(m_list);
    row->setData(Position, Qt::UserRole, static_cast<qlonglong>(q.id));
    row->setText(Position, q.status == QueueStatus::queued ? QString::number(++position) : QString());
    row->setText(Name, QString::fromStdString(q.config.name));
    row->setText(Status, QString::fromStdString(q.status.name()));
    if (!q.error.empty()) row->setToolTip(Status, QString::fromStdString(q.error));
    if (!q.runDir.empty()) row->setToolTip(Name, QString::fromStdString(q.runDir));
    row->setText(Given, !q.label.empty() ? QString::fromStdString(q.label) : given.join(" "));
    if (q.label.empty()) row->setToolTip(Given, all.join("\n"));
    row->setText(Model, modelText(QString::fromStdString(q.config.model.kind), q.config.model.width,
                                  q.config.model.depth, QString::fromStdString(q.config.model.path)));
    if (q.status != QueueStatus::queued)
      for (int c = 0; c < Columns; ++c) row->setForeground(c, palette().color(QPalette::Disabled, QPalette::Text));
  }
  if (selected > 0) select(selected);
  updateButtons();
}

std::vector<int64_t> QueuePanel::itemIds() const {
  std::vector<int64_t> ids;
  for (int i = 0; i < m_list->topLevelItemCount(); ++i)
    ids.push_back(m_list->topLevelItem(i)->data(Position, Qt::UserRole).toLongLong());
  return ids;
}

void QueuePanel::select(int64_t id) {
  for (int i = 0; i < m_list->topLevelItemCount(); ++i) {
    QTreeWidgetItem* row = m_list->topLevelItem(i);
    row->setSelected(row->data(Position, Qt::UserRole).toLongLong() == id);
  }
}

int64_t QueuePanel::selectedId() const {
  const auto rows = m_list->selectedItems();
  return rows.isEmpty() ? 0 : rows.front()->data(Position, Qt::UserRole).toLongLong();
}

const QueueItem* QueuePanel::selectedItem() const {
  const int64_t id = selectedId();
  for (const QueueItem& q : m_items)
    if (q.id == id) return &q;
  return nullptr;
}

void QueuePanel::updateButtons() {
  const QueueItem* item = selectedItem();
  const bool queued = item && item->status == QueueStatus::queued;
  for (QPushButton* b : {m_up, m_down, m_remove, m_edit, m_runNow}) b->setEnabled(queued);
  m_runAll->setEnabled(std::any_of(m_items.begin(), m_items.end(), [](const QueueItem& q) {
    return q.status == QueueStatus::queued || q.status == QueueStatus::running;
  }));
}

bool QueuePanel::moveSelected(int by) {
  const int64_t id = selectedId();
  bool moved = false;
  try {
    editQueue(m_file.toStdString(), [&](std::vector<QueueItem>& items) {
      // Among the queued items only: the others have run or are running.
      std::vector<size_t> queued;
      for (size_t i = 0; i < items.size(); ++i)
        if (items[i].status == QueueStatus::queued) queued.push_back(i);
      for (size_t k = 0; k < queued.size(); ++k) {
        if (items[queued[k]].id != id) continue;
        const auto to = static_cast<std::ptrdiff_t>(k) + by;
        if (to < 0 || to >= static_cast<std::ptrdiff_t>(queued.size())) return;
        std::swap(items[queued[k]], items[queued[static_cast<size_t>(to)]]);
        moved = true;
        return;
      }
    });
  } catch (const std::exception& e) {
    Q_EMIT message(QString::fromStdString(e.what()), true);
  }
  refresh();
  select(id);
  return moved;
}

bool QueuePanel::removeSelected() {
  const int64_t id = selectedId();
  bool removed = false;
  try {
    editQueue(m_file.toStdString(), [&](std::vector<QueueItem>& items) {
      const auto before = items.size();
      items.erase(std::remove_if(items.begin(), items.end(),
                                 [&](const QueueItem& q) { return q.id == id && q.status == QueueStatus::queued; }),
                  items.end());
      removed = items.size() != before;
    });
  } catch (const std::exception& e) {
    Q_EMIT message(QString::fromStdString(e.what()), true);
  }
  refresh();
  if (removed) Q_EMIT message(tr("Removed from the queue"), false);
  return removed;
}

bool QueuePanel::editSelected(const std::vector<std::string>& assignments, QString* error) {
  const int64_t id = selectedId();
  QString why;
  try {
    editQueue(m_file.toStdString(), [&](std::vector<QueueItem>& items) {
      for (QueueItem& q : items) {
        if (q.id != id) continue;
        if (q.status != QueueStatus::queued)
          throw InputError("item " + std::to_string(id) + " is " + q.status.name() + ", not queued");
        TrainConfig edited = q.config;
        for (const auto& a : assignments) applyOverride(edited, a);  // names a mistyped setting
        const auto errors = validate(edited);
        if (!errors.empty()) {
          std::string text;
          for (const auto& e : errors) text += (text.empty() ? "" : "; ") + e.text();
          throw InputError(text);
        }
        q.config = std::move(edited);
        return;
      }
      throw InputError("the item is no longer in the queue");
    });
  } catch (const std::exception& e) {
    why = QString::fromStdString(e.what());
  }
  refresh();
  select(id);
  if (error) *error = why;
  if (!why.isEmpty()) return false;
  Q_EMIT message(tr("Queue item updated"), false);
  return true;
}

void QueuePanel::askEdit() {
  const QueueItem* item = selectedItem();
  if (!item) return;
  QDialog dialog(this);
  dialog.setObjectName("queueEditDialog");
  dialog.setWindowTitle(tr("Edit %1").arg(QString::fromStdString(item->config.name)));
  auto* form = new QFormLayout(&dialog);
  QStringList lines;  // what sets the item apart from the defaults
  for (const auto& a : settingsAssignments(settingsChanges(TrainConfig{}, item->config)))
    lines << QString::fromStdString(a);
  auto* edits = new QPlainTextEdit(lines.join("\n"));
  edits->setObjectName("queueEditChanges");
  form->addRow(new QLabel(tr("The item's settings, one key=value per line; change or add lines.")));
  form->addRow(edits);
  dialog.resize(520, 420);
  runCheckedFormDialog(dialog, form, "queueEditError", [&] {
    QString why;
    editSelected(settingLines(edits->toPlainText()), &why);
    return why;
  });
}

}  // namespace studio::ui
