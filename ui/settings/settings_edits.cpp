#include "ui/settings/settings_edits.h"

#include <QObject>

#include "ui/settings/settings_panel.h"

namespace studio::ui {

SetFieldCommand::SetFieldCommand(SettingsPanel* panel, QString path, QString before, QString after, int serial)
    : m_panel(panel),
      m_path(std::move(path)),
      m_before(std::move(before)),
      m_after(std::move(after)),
      m_serial(serial) {
  setText(QObject::tr("edit %1").arg(m_path));
}

bool SetFieldCommand::mergeWith(const QUndoCommand* other) {
  const auto* o = static_cast<const SetFieldCommand*>(other);
  if (o->m_path != m_path || o->m_serial != m_serial || m_serial < 0) return false;
  m_after = o->m_after;
  return true;
}

void SetFieldCommand::redo() { m_panel->applyFieldText(m_path, m_after); }
void SetFieldCommand::undo() { m_panel->applyFieldText(m_path, m_before); }

SetDocumentCommand::SetDocumentCommand(SettingsPanel* panel, nlohmann::json before, nlohmann::json after,
                                       const QString& what)
    : m_panel(panel), m_before(std::move(before)), m_after(std::move(after)) {
  setText(what);
}

void SetDocumentCommand::redo() { m_panel->applyDocument(m_after); }
void SetDocumentCommand::undo() { m_panel->applyDocument(m_before); }

}  // namespace studio::ui
