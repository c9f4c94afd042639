#pragma once
// The settings form's undo steps: one field's edit (typing in one field
// merges into one step until the field loses focus; toggles and choices are
// a step each), and a whole document (a preset, a file, a run's settings).
// Thread: the UI thread.

#include <QString>
#include <QUndoCommand>

#include <nlohmann/json.hpp>

namespace studio::ui {

class SettingsPanel;

class SetFieldCommand : public QUndoCommand {
 public:
  SetFieldCommand(SettingsPanel* panel, QString path, QString before, QString after, int serial);
  int id() const override { return 1; }
  bool mergeWith(const QUndoCommand* other) override;
  void redo() override;
  void undo() override;

 private:
  SettingsPanel* m_panel;
  QString m_path, m_before, m_after;
  int m_serial;
};

class SetDocumentCommand : public QUndoCommand {
 public:
  SetDocumentCommand(SettingsPanel* panel, nlohmann::json before, nlohmann::json after, const QString& what);
  void redo() override;
  void undo() override;

 private:
  SettingsPanel* m_panel;
  nlohmann::json m_before, m_after;
};

}  // namespace studio::ui
