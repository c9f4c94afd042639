#include "ui/settings/settings_panel.h"
#include "ui/settings/number_text.h"

#include "studio/devices.h"

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QMenu>
#include <QPushButton>
#include <QRegularExpression>
#include <QScrollArea>
#include <QSettings>
#include <QToolButton>
#include <QUndoStack>
#include <QVBoxLayout>

#include <charconv>
#include <cmath>

#include "studio/session.h"
#include "studio/settings_schema.h"
#include "ui/settings/file_pickers.h"
#include "ui/settings/settings_edits.h"
#include "ui/settings/settings_widgets.h"

namespace studio::ui {

struct SettingsPanel::Field {
  const FieldSpec* spec = nullptr;
  QWidget* row = nullptr;  // editor and its error line
  QLineEdit* line = nullptr;
  QCheckBox* check = nullptr;
  QComboBox* combo = nullptr;
  QLabel* error = nullptr;
  QString lastText;
  int editSerial = 0;  // typing within one edit merges into one undo step
};

namespace {

bool isPath(FieldType t) { return t == FieldType::Folder || t == FieldType::File || t == FieldType::DataPath; }

// Runs a file or preset operation; its exception's text (which names the
// file and the problem) becomes the error for the person.
template <class F>
bool attempt(QString* error, F&& operation) {
  try {
    operation();
    return true;
  } catch (const std::exception& e) {
    if (error) *error = QString::fromStdString(e.what());
    return false;
  }
}

}  // namespace

SettingsPanel::SettingsPanel(QWidget* parent) : QWidget(parent), m_undo(new QUndoStack(this)) {
  auto* top = new QVBoxLayout(this);
  top->setContentsMargins(4, 4, 4, 4);

  auto* presetRow = new QHBoxLayout;
  presetRow->addWidget(new QLabel(tr("Preset:")));
  m_presets = new QComboBox;
  m_presets->setObjectName("presets");
  WheelGuard::guard(m_presets);
  m_presets->setToolTip(tr("Start from a shipped set of settings."));
  presetRow->addWidget(m_presets, 1);
  top->addLayout(presetRow);
  connect(m_presets, &QComboBox::activated, this, [this](int i) {
    QString error;
    if (!loadPreset(m_presets->itemText(i), &error)) Q_EMIT message(error);
  });

  auto* fileRow = new QHBoxLayout;
  auto* load = new QPushButton(tr("Load…"));
  load->setObjectName("loadSettings");
  load->setToolTip(tr("Read settings from a JSON file (a saved settings file or a run's settings.json)."));
  auto* save = new QPushButton(tr("Save…"));
  save->setObjectName("saveSettings");
  save->setToolTip(tr("Write these settings to a JSON file."));
  m_undoAction = m_undo->createUndoAction(this, tr("Undo"));
  m_undoAction->setShortcut(QKeySequence::Undo);
  m_redoAction = m_undo->createRedoAction(this, tr("Redo"));
  m_redoAction->setShortcut(QKeySequence::Redo);
  // The stack enables them as it can undo; a lock overrides that.
  connect(m_undo, &QUndoStack::canUndoChanged, this, [this](bool can) { m_undoAction->setEnabled(can && !m_locked); });
  connect(m_undo, &QUndoStack::canRedoChanged, this, [this](bool can) { m_redoAction->setEnabled(can && !m_locked); });
  // Buttons of a fixed width: their text stays "Undo" / "Redo" (what they
  // undo is their tooltip, and the Edit menu's text), so the dock does not
  // widen as the command's name grows.
  const auto button = [this](QAction* action, const QString& text, const QString& name) {
    auto* b = new QToolButton;
    b->setObjectName(name);
    b->setText(text);
    b->setEnabled(action->isEnabled());
    connect(b, &QToolButton::clicked, action, &QAction::trigger);
    connect(action, &QAction::changed, b, [b, action] {
      b->setEnabled(action->isEnabled());
      b->setToolTip(action->text() + " (" + action->shortcut().toString(QKeySequence::NativeText) + ")");
    });
    return b;
  };
  auto* undo = button(m_undoAction, tr("Undo"), "undoSettings");
  auto* redo = button(m_redoAction, tr("Redo"), "redoSettings");
  fileRow->addWidget(load);
  fileRow->addWidget(save);
  fileRow->addStretch(1);
  fileRow->addWidget(undo);
  fileRow->addWidget(redo);
  top->addLayout(fileRow);
  connect(load, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Load settings"), QString(), tr("Settings (*.json)"));
    QString error;
    if (!path.isEmpty() && !loadFile(path, &error)) Q_EMIT failed(error);
  });
  connect(save, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Save settings"), QString::fromStdString(m_config.name) + ".json", tr("Settings (*.json)"));
    QString error;
    if (!path.isEmpty() && !saveFile(path, &error)) Q_EMIT failed(error);
  });

  m_summary = new QLabel;
  m_summary->setObjectName("settingsSummary");
  m_summary->setWordWrap(true);
  m_summary->setStyleSheet("color: #d03c2f;");
  m_summary->hide();

  auto* scroll = new QScrollArea;
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  m_formHost = new QWidget;
  scroll->setWidget(m_formHost);
  top->addWidget(scroll, 1);
  // The count of settings to fix goes under the form: appearing, it never
  // moves the field being edited.
  top->addWidget(m_summary);
  buildForm();
  applyDocument(toJson(TrainConfig{}));
}

SettingsPanel::~SettingsPanel() {
  // ~QWidget deletes the children after this body: the undo stack's clear()
  // then emits canUndoChanged, whose handlers would run on a panel already
  // destroyed (UBSan: "member access ... which does not point to an object
  // of type 'SettingsPanel'"; test_window_review's heap corruption inside
  // tcmalloc came after it). Nothing of the panel listens any more.
  disconnect(m_undo, nullptr, this, nullptr);
}

void SettingsPanel::buildForm() {
  auto* column = new QVBoxLayout(m_formHost);
  column->setContentsMargins(0, 0, 0, 0);
  column->setSpacing(2);
  for (const std::string& group : settingsGroups()) {
    // "&&": a group box reads a single "&" as a shortcut mark ("Precision _memory").
    auto* box = new QGroupBox(QString::fromStdString(group).replace("&", "&&"));
    auto* form = new QFormLayout(box);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    form->setVerticalSpacing(2);  // tight rows: 14 fields at 720 px, not 12 (issue 40, item 9)
    form->setContentsMargins(6, 2, 6, 4);
    m_layouts[QString::fromStdString(group)] = form;
    column->addWidget(box);
  }
  column->addStretch(1);

  for (const FieldSpec& spec : settingsSchema()) {
    auto f = std::make_unique<Field>();
    f->spec = &spec;
    const QString path = QString::fromStdString(spec.path);
    const QString tip = QString::fromStdString(spec.tip);
    f->row = new QWidget;
    auto* v = new QVBoxLayout(f->row);
    v->setContentsMargins(0, 0, 0, 0);
    v->setSpacing(1);
    QWidget* editorWidget = nullptr;
    switch (spec.type) {
      case FieldType::Bool:
        f->check = new QCheckBox;
        editorWidget = f->check;
        connect(f->check, &QCheckBox::clicked, this, [this, path] { onEdited(path); });
        break;
      case FieldType::Choice:
        f->combo = new QComboBox;
        for (const auto& c : spec.choices) f->combo->addItem(QString::fromStdString(c));
        WheelGuard::guard(f->combo);
        editorWidget = f->combo;
        connect(f->combo, &QComboBox::activated, this, [this, path] { onEdited(path); });
        break;
      default: {
        f->line = new QLineEdit;
        editorWidget = f->line;
        Field* raw = f.get();
        // While a field is typed in, the form's rows keep their places (a row
        // that appears or goes would move the fields under the mouse); they
        // settle when its editing ends.
        connect(f->line, &QLineEdit::textEdited, this, [this, path] {
          m_typing = path;
          onEdited(path);
        });
        connect(f->line, &QLineEdit::editingFinished, this, [this, raw, path] {
          ++raw->editSerial;
          if (m_typing != path) return;
          m_typing.clear();
          revalidate();
        });
        if (spec.type == FieldType::Size) f->line->setPlaceholderText(tr("auto, or HEIGHTxWIDTH"));
        if (spec.type == FieldType::TextList)
          f->line->setPlaceholderText(tr("none (names or indices, comma-separated)"));
        if (isPath(spec.type)) {
          auto* h = new QHBoxLayout;
          h->setContentsMargins(0, 0, 0, 0);
          h->addWidget(f->line, 1);
          auto* browse = new QToolButton;
          browse->setObjectName(path + ".browse");
          browse->setText(tr("…"));
          browse->setToolTip(spec.type == FieldType::File ? tr("Choose a file") : tr("Choose a folder or file"));
          h->addWidget(browse);
          v->addLayout(h);
          connect(browse, &QToolButton::clicked, this, [this, raw, path] { browseFor(*raw, path); });
          if (spec.type == FieldType::DataPath) {  // a folder or a file: the other one a click away
            auto* menu = new QMenu(browse);
            menu->addAction(tr("Choose a file…"), this, [this, raw, path] { browseFor(*raw, path, true); })
                ->setObjectName(path + ".browseFile");
            menu->addAction(tr("Choose a folder…"), this, [this, raw, path] { browseFor(*raw, path, false); })
                ->setObjectName(path + ".browseFolder");
            browse->setMenu(menu);
            browse->setPopupMode(QToolButton::MenuButtonPopup);
          }
        }
      }
    }
    editorWidget->setObjectName(path);
    editorWidget->setToolTip(tip);
    if (path == "performance.device") {
      // The devices this machine has, with their memory, one click each
      // (typing stays possible: cuda:N on a machine the settings are for).
      auto* h = new QHBoxLayout;
      h->setContentsMargins(0, 0, 0, 0);
      h->addWidget(editorWidget, 1);
      auto* pick = new QToolButton;
      pick->setObjectName(path + ".devices");
      pick->setText(tr("Devices"));
      pick->setToolTip(tr("The devices on this machine"));
      pick->setPopupMode(QToolButton::InstantPopup);
      auto* menu = new QMenu(pick);
      menu->addAction(tr("auto: the first GPU when there is one, else the CPU"))->setData("auto");
      for (const auto& d : computeDevices())
        menu->addAction(QString::fromStdString(d.name + ": " + d.description))->setData(QString::fromStdString(d.name));
      connect(menu, &QMenu::triggered, this, [this, path](QAction* a) { editField(path, a->data().toString()); });
      pick->setMenu(menu);
      h->addWidget(pick);
      v->addLayout(h);
    } else if (!isPath(spec.type)) {
      v->addWidget(editorWidget);
    }
    f->error = new FieldMessage;
    f->error->setObjectName(path + ".error");
    f->error->hide();
    v->addWidget(f->error);
    auto* label = new QLabel(QString::fromStdString(spec.label));
    label->setToolTip(tip);
    label->setBuddy(editorWidget);
    m_layouts[QString::fromStdString(spec.group)]->addRow(label, f->row);
    m_fields[path] = std::move(f);
  }
}

QString SettingsPanel::editorText(const Field& f) const {
  if (f.check) return f.check->isChecked() ? "true" : "false";
  if (f.combo) return f.combo->currentText();
  return f.line->text();
}

void SettingsPanel::setEditorText(Field& f, const QString& text) {
  if (editorText(f) == text) return;
  m_applying = true;
  if (f.check) {
    f.check->setChecked(text == "true");
  } else if (f.combo) {
    int i = f.combo->findText(text);
    if (i < 0) {  // a value from a file that is not one of the choices: shown, and its error with it
      f.combo->addItem(text);
      i = f.combo->count() - 1;
    }
    f.combo->setCurrentIndex(i);
  } else {
    f.line->setText(text);
  }
  m_applying = false;
}

void SettingsPanel::onEdited(const QString& path) {
  if (m_applying) return;
  Field& f = *m_fields.at(path);
  const QString now = editorText(f);
  if (now == f.lastText) return;
  const int serial = f.line ? f.editSerial : -1;
  m_undo->push(new SetFieldCommand(this, path, f.lastText, now, serial));
}

void SettingsPanel::editField(const QString& path, const QString& text) {
  auto it = m_fields.find(path);
  if (it == m_fields.end() || text == it->second->lastText) return;
  m_undo->push(new SetFieldCommand(this, path, it->second->lastText, text, -1));
}

void SettingsPanel::applyFieldText(const QString& path, const QString& text) {
  auto it = m_fields.find(path);
  if (it == m_fields.end()) return;
  Field& f = *it->second;
  // A run is named by what it trains unless the person named it: the name
  // follows the data and the model while it is the one given automatically.
  static const QStringList naming = {"data.format",     "data.dataset", "data.root",
                                     "data.train_file", "model.kind",   "model.path"};
  const std::string nameNow = m_doc.value("name", std::string());
  const bool autoName = naming.contains(path) && (nameNow == m_autoName || nameNow == suggestedRunName(m_config));
  setEditorText(f, text);
  f.lastText = text;
  const auto pointer = nlohmann::json::json_pointer(jsonPointer(path.toStdString()));
  const QString trimmed = text.trimmed();
  m_parseErrors.erase(path);
  switch (f.spec->type) {
    case FieldType::Bool:
      m_doc[pointer] = text == "true";
      break;
    case FieldType::Int: {
      const std::string s = trimmed.toStdString();
      int64_t value = 0;
      uint64_t big = 0;
      const char* end = s.data() + s.size();
      if (!s.empty() && std::from_chars(s.data(), end, value).ptr == end) {
        m_doc[pointer] = value;
      } else if (!s.empty() && std::from_chars(s.data(), end, big).ptr == end) {
        m_doc[pointer] = big;
      } else {
        m_parseErrors[path] = tr("must be a whole number (got \"%1\")").arg(text);
      }
      break;
    }
    case FieldType::Real: {
      bool ok = false;
      const double value = realOf(trimmed, &ok);
      if (ok && std::isfinite(value))
        m_doc[pointer] = value;
      else
        m_parseErrors[path] = tr("must be a number (got \"%1\")").arg(text);
      break;
    }
    case FieldType::Size: {
      // "auto" (or empty), "64x64", "64 64" or "[64, 64]".
      QString t = trimmed.toLower();
      if (t.isEmpty() || t == "auto") {
        m_doc[pointer] = std::vector<int64_t>{0, 0};
        break;
      }
      t.remove('[').remove(']');
      const QStringList parts = t.split(QRegularExpression("[x, ]+"), Qt::SkipEmptyParts);
      bool okH = false, okW = false;
      const qlonglong h = parts.size() == 2 ? parts[0].toLongLong(&okH) : 0;
      const qlonglong w = parts.size() == 2 ? parts[1].toLongLong(&okW) : 0;
      if (okH && okW)
        m_doc[pointer] = std::vector<int64_t>{h, w};
      else
        m_parseErrors[path] = tr("must be auto or HEIGHTxWIDTH, e.g. 64x64 (got \"%1\")").arg(text);
      break;
    }
    case FieldType::TextList: {
      std::vector<std::string> items;
      for (const QString& part : trimmed.split(',', Qt::SkipEmptyParts))
        if (!part.trimmed().isEmpty()) items.push_back(part.trimmed().toStdString());
      m_doc[pointer] = items;
      break;
    }
    default:
      m_doc[pointer] = text.toStdString();
  }
  revalidate();
  if (autoName) {
    const std::string suggested = suggestedRunName(m_config);
    m_autoName = suggested;
    if (suggested != nameNow) applyFieldText("name", QString::fromStdString(suggested));
  }
}

void SettingsPanel::browseFor(Field& f, const QString& path, std::optional<bool> pickFile) {
  const QString title = QString::fromStdString(f.spec->label);
  const bool file = pickFile ? *pickFile
                             : f.spec->type == FieldType::File || (f.spec->type == FieldType::DataPath &&
                                                                   f.spec->picksFile && f.spec->picksFile(m_config));
  const QString filter = pickerFilter(path, file);
  const QString chosen = file ? QFileDialog::getOpenFileName(this, title, pickerStart(f.line->text(), file), filter)
                              : QFileDialog::getExistingDirectory(this, title, pickerStart(f.line->text(), file));
  if (chosen.isEmpty()) return;
  rememberPickerFolder(chosen, file);
  f.line->setText(chosen);
  ++f.editSerial;
  onEdited(path);
}

void SettingsPanel::applyDocument(const nlohmann::json& doc) {
  m_doc = doc;
  m_parseErrors.clear();
  for (auto& [path, f] : m_fields) {
    const auto pointer = nlohmann::json::json_pointer(jsonPointer(path.toStdString()));
    const QString text = m_doc.contains(pointer) ? valueText(m_doc.at(pointer), f->spec->type) : QString();
    setEditorText(*f, text);
    f->lastText = text;
  }
  revalidate();
}

void SettingsPanel::revalidate() {
  std::vector<ConfigError> errors;
  TrainConfig c = configFromJson(m_doc, errors);
  if (errors.empty()) errors = validate(c);
  if (errors.empty()) errors = checkOnThisMachine(c);  // a GPU that is not here fails only after Start
  m_config = c;
  m_errors = m_parseErrors;
  for (const auto* outside : {&m_dataError, &m_planError})
    if (!outside->second.isEmpty() && errors.empty() && m_parseErrors.empty())
      m_errors[outside->first] = outside->second;
  m_warnings.clear();
  if (errors.empty()) {
    std::vector<ConfigError> notes = warningsOnThisMachine(c);
    for (auto& w : settingsWithoutEffect(c)) notes.push_back(std::move(w));  // optimizer.lr under OneCycle
    for (const auto& w : notes) {
      QString& slot = m_warnings[QString::fromStdString(w.field)];
      slot = slot.isEmpty() ? QString::fromStdString(w.message) : slot + "; " + QString::fromStdString(w.message);
    }
  }
  QStringList elsewhere;
  for (const auto& e : errors) {
    const QString path = QString::fromStdString(e.field);
    if (m_parseErrors.count(path)) continue;
    if (m_fields.count(path)) {
      QString& slot = m_errors[path];
      slot = slot.isEmpty() ? QString::fromStdString(e.message) : slot + "; " + QString::fromStdString(e.message);
    } else {
      m_errors[path.isEmpty() ? QStringLiteral("settings") : path] = QString::fromStdString(e.message);
      elsewhere << QString::fromStdString(e.text());
    }
  }
  for (auto& [path, f] : m_fields) {
    auto it = m_errors.find(path);
    const bool bad = it != m_errors.end();
    auto warning = m_warnings.find(path);
    const bool warned = !bad && warning != m_warnings.end();
    f->error->setText(bad ? it->second : warned ? tr("Note: %1").arg(warning->second) : QString());
    // Red for an error, amber for a note (a palette colour: cheaper than a
    // style sheet per label on every edit).
    QPalette palette = f->error->palette();
    palette.setColor(QPalette::WindowText, bad ? QColor(0xd0, 0x3c, 0x2f) : QColor(0xa0, 0x62, 0x0a));
    f->error->setPalette(palette);
    // The field typed in shows its own error or note at once; other fields'
    // rows and lines settle when the typing ends.
    if (!m_typing.isEmpty() && path != m_typing) continue;
    f->error->setVisible(bad || warned);
    const bool shown = bad || warned || settingApplies(*f->spec, c);
    if (auto* form = m_layouts.at(QString::fromStdString(f->spec->group))) form->setRowVisible(f->row, shown);
  }
  if (m_errors.empty()) {
    if (m_typing.isEmpty()) m_summary->hide();
  } else {
    QStringList which;  // the fields by their labels in the form
    for (const auto& [path, message] : m_errors) {
      auto f = m_fields.find(path);
      which << (f != m_fields.end() ? QString::fromStdString(f->second->spec->label) + " (" + path + ")" : path);
    }
    QString text = tr("%n setting(s) to fix before a run can start: %1.", "", static_cast<int>(m_errors.size()))
                       .arg(which.join(", "));
    if (!elsewhere.isEmpty()) text += "\n" + elsewhere.join("\n");
    m_summary->setText(text);
    if (m_typing.isEmpty()) m_summary->show();
  }
  showMatchingPreset();
  Q_EMIT settingsChanged();
  const bool valid = m_errors.empty();
  if (valid != m_lastValid) {
    m_lastValid = valid;
    Q_EMIT validityChanged(valid);
  }
}

void SettingsPanel::setDataError(const QString& field, const QString& message) {
  const std::pair<QString, QString> now{message.isEmpty() ? QString() : field, message};
  if (now == m_dataError) return;
  m_dataError = now;
  revalidate();
}

void SettingsPanel::setPlanError(const QString& field, const QString& message) {
  const std::pair<QString, QString> now{message.isEmpty() ? QString() : field, message};
  if (now == m_planError) return;
  m_planError = now;
  revalidate();
}

QStringList SettingsPanel::errorTexts() const {
  QStringList out;
  for (const FieldSpec& spec : settingsSchema()) {
    auto it = m_errors.find(QString::fromStdString(spec.path));
    if (it != m_errors.end()) out << it->first + " " + it->second;
  }
  for (const auto& [path, message] : m_errors)
    if (!m_fields.count(path)) out << path + " " + message;
  return out;
}

QString SettingsPanel::errorFor(const QString& path) const {
  auto it = m_fields.find(path);
  return it == m_fields.end() || it->second->error->isHidden() || !m_errors.count(path) ? QString()
                                                                                        : it->second->error->text();
}

QString SettingsPanel::warningFor(const QString& path) const {
  auto it = m_fields.find(path);
  return it == m_fields.end() || it->second->error->isHidden() || m_errors.count(path) ? QString()
                                                                                       : it->second->error->text();
}

QWidget* SettingsPanel::editor(const QString& path) const {
  auto it = m_fields.find(path);
  if (it == m_fields.end()) return nullptr;
  const Field& f = *it->second;
  if (f.check) return f.check;
  if (f.combo) return f.combo;
  return f.line;
}

bool SettingsPanel::isFieldShown(const QString& path) const {
  auto it = m_fields.find(path);
  if (it == m_fields.end()) return false;
  return m_layouts.at(QString::fromStdString(it->second->spec->group))->isRowVisible(it->second->row);
}

void SettingsPanel::setConfig(const TrainConfig& config, const QString& what) {
  m_undo->push(new SetDocumentCommand(this, m_doc, toJson(config), what.isEmpty() ? tr("set settings") : what));
}

bool SettingsPanel::loadPreset(const QString& name, QString* error) {
  return attempt(error, [&] {
    const std::string path = presetPath(m_presetDir.toStdString(), name.toStdString());
    const TrainConfig c = loadConfigFile(path);
    m_settingsSource = tr("%1 (edited)").arg(name);
    m_autoName = c.name;
    setConfig(c, tr("load preset %1").arg(name));
    Q_EMIT message(tr("Preset %1 loaded").arg(name));
  });
}

bool SettingsPanel::loadFile(const QString& path, QString* error) {
  return attempt(error, [&] {
    const TrainConfig c = loadConfigFile(path.toStdString());
    // The settings are the file's now, no preset's (unless they are one's).
    m_settingsSource = tr("(from %1)").arg(QFileInfo(path).fileName());
    setConfig(c, tr("load %1").arg(path));
    Q_EMIT message(tr("Settings loaded from %1").arg(path));
  });
}

bool SettingsPanel::saveFile(const QString& path, QString* error) {
  return attempt(error, [&] {
    if (!isValid())
      throw ConfigFileError("the settings have errors to fix first: " + errorTexts().join("; ").toStdString());
    saveConfigFile(m_config, path.toStdString());
    Q_EMIT message(tr("Settings saved to %1").arg(path));
  });
}

void SettingsPanel::setLocked(bool locked) {
  m_formHost->setEnabled(!locked);
  m_presets->setEnabled(!locked);
  for (auto* b : findChildren<QPushButton*>())
    if (b->objectName() == "loadSettings") b->setEnabled(!locked);
  m_locked = locked;
  m_undoAction->setEnabled(m_undo->canUndo() && !locked);
  m_redoAction->setEnabled(m_undo->canRedo() && !locked);
}

}  // namespace studio::ui
