#pragma once
// The settings form: an editor for every TrainConfig field, in sections, with
// a tooltip each. Every edit goes through the engine's own JSON reading and
// validate(), and each error is shown under its field with the engine's
// message. Presets, loading and saving JSON, and undo/redo of every edit.
// Thread: the UI thread.

#include <QString>
#include <QStringList>
#include <QWidget>

#include <map>
#include <memory>
#include <optional>

#include <nlohmann/json.hpp>

#include "studio/settings_schema.h"
#include "studio/train_config.h"

class QAction;
class QComboBox;
class QFormLayout;
class QLabel;
class QUndoStack;

namespace studio::ui {

class SettingsPanel : public QWidget {
  Q_OBJECT

 public:
  explicit SettingsPanel(QWidget* parent = nullptr);
  ~SettingsPanel() override;

  // Shows these settings (an undoable edit).
  void setConfig(const TrainConfig& config, const QString& what = QString());
  // The settings as the form holds them; meaningful when isValid().
  TrainConfig config() const { return m_config; }
  nlohmann::json document() const { return m_doc; }
  bool isValid() const { return m_errors.empty(); }
  // "field message" for every error, in form order.
  QStringList errorTexts() const;
  // The inline error under a field ("" when it is fine).
  QString errorFor(const QString& path) const;
  // The inline warning under a field: settings that run but are probably not
  // meant (fp16 on a machine without a GPU); it never blocks Start.
  QString warningFor(const QString& path) const;
  // The editor of a field ("optimizer.lr"): QLineEdit, QCheckBox or QComboBox.
  QWidget* editor(const QString& path) const;
  bool isFieldShown(const QString& path) const;
  QUndoStack* undoStack() const { return m_undo; }
  // Undo and redo of the form's edits (disabled while locked); the window's
  // Edit menu shows the same actions.
  QAction* undoAction() const { return m_undoAction; }
  QAction* redoAction() const { return m_redoAction; }

  void setPresets(const QString& presetDir);
  // Loads a preset by name; false with the message when it cannot.
  bool loadPreset(const QString& name, QString* error = nullptr);
  bool loadFile(const QString& path, QString* error = nullptr);
  bool saveFile(const QString& path, QString* error = nullptr);
  // Locks editing while a run trains (its settings are fixed once started).
  void setLocked(bool locked);

  // An error found when the data was read (a folder that does not exist, a
  // label column that is not there): shown under its field, and the
  // settings are not valid until it is cleared (an empty message).
  void setDataError(const QString& field, const QString& message);
  // The same for what only the step plan shows (it needs the data's size):
  // a warm-up as long as the whole run.
  void setPlanError(const QString& field, const QString& message);

  // Applies a field's text as if typed (used by undo/redo and the tests).
  void applyFieldText(const QString& path, const QString& text);
  // Sets a field's text as a person's edit does (one undo step).
  void editField(const QString& path, const QString& text);
  void applyDocument(const nlohmann::json& doc);

 Q_SIGNALS:
  // After every change of the settings, valid or not.
  void settingsChanged();
  void validityChanged(bool valid);
  // A message for the status bar (loading and saving).
  void message(const QString& text);
  // A settings file that could not be loaded or saved through the panel's
  // buttons: the window shows it in a dialog and logs it as an error.
  void failed(const QString& text);

 private:
  struct Field;
  void buildForm();
  void onEdited(const QString& path);
  void revalidate();
  void setEditorText(Field& f, const QString& text);
  QString editorText(const Field& f) const;
  // file: the picker's kind (a file or a folder), else the setting's own.
  void browseFor(Field& f, const QString& path, std::optional<bool> file = std::nullopt);

  std::map<QString, std::unique_ptr<Field>> m_fields;
  std::map<QString, QFormLayout*> m_layouts;
  nlohmann::json m_doc;
  TrainConfig m_config;
  std::map<QString, QString> m_errors;       // path -> message (validation and parsing)
  std::map<QString, QString> m_parseErrors;  // text that is not a value of the field's type
  std::map<QString, QString> m_warnings;     // path -> message, shown when the field has no error
  std::pair<QString, QString> m_dataError;   // field, message
  std::pair<QString, QString> m_planError;   // field, message
  QUndoStack* m_undo;
  QComboBox* m_presets = nullptr;
  QString m_presetDir;
  std::vector<nlohmann::json> m_presetDocs;  // each preset's settings, in the box's order
  QString m_settingsSource;
  std::string m_autoName;  // the name given automatically (a preset's, or by what the run trains)  // what the box says
                           // when the settings are no preset's
  // The Preset box shows the preset these settings are, or where they came from.
  void showMatchingPreset();

  QLabel* m_summary = nullptr;
  QWidget* m_formHost = nullptr;
  QAction* m_undoAction = nullptr;
  QAction* m_redoAction = nullptr;
  bool m_locked = false;
  bool m_applying = false;
  QString m_typing;  // the field typed in now: the rows' visibility waits for its editing to end
  bool m_lastValid = true;
};

}  // namespace studio::ui
