// SettingsPanel's Preset box: the shipped presets, the one the settings
// are (or where they came from: "<preset> (edited)", "(from file.json)").
#include <QComboBox>

#include "studio/presets.h"
#include "ui/settings/settings_panel.h"

namespace studio::ui {

void SettingsPanel::setPresets(const QString& presetDir) {
  m_presetDir = presetDir;
  m_presets->clear();
  m_presetDocs.clear();
  for (const auto& name : presetNames(presetDir.toStdString())) {
    nlohmann::json doc;
    try {
      doc = toJson(loadConfigFile(presetPath(presetDir.toStdString(), name)));
    } catch (const std::exception&) {
      // Said when it is chosen.
    }
    m_presets->addItem(QString::fromStdString(name));
    m_presetDocs.push_back(std::move(doc));
  }
  showMatchingPreset();
}

void SettingsPanel::showMatchingPreset() {
  const nlohmann::json now = toJson(m_config);
  const QSignalBlocker quiet(m_presets);
  for (size_t i = 0; i < m_presetDocs.size(); ++i)
    if (m_presetDocs[i] == now) {
      m_presets->setPlaceholderText(QString());
      m_presets->setCurrentIndex(static_cast<int>(i));
      return;
    }
  m_presets->setPlaceholderText(m_settingsSource.isEmpty() ? tr("(your settings)") : m_settingsSource);
  m_presets->setCurrentIndex(-1);
}

}  // namespace studio::ui
