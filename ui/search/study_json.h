#pragma once
// study.json's trials and space as the Search tab reads them: shared by the
// panel (study_panel.cpp) and its plots (study_plots.cpp).

#include <QString>
#include <QStringList>

#include <limits>
#include <optional>

#include <nlohmann/json.hpp>

#include "studio/search_space.h"

namespace studio::ui::study_json {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A study.json trial's state; unset for a word that names none.
inline std::optional<TrialState> trialState(const nlohmann::json& trial) {
  const auto it = trial.find("state");
  return it != trial.end() && it->is_string() ? choiceNamed<TrialState>(it->get<std::string>()) : std::nullopt;
}

inline QString text(const nlohmann::json& j) {
  if (j.is_string()) return QString::fromStdString(j.get<std::string>());
  if (j.is_boolean()) return j.get<bool>() ? "true" : "false";
  if (j.is_number_float()) return QString::number(j.get<double>(), 'g', 6);
  return QString::fromStdString(j.dump());
}

inline double number(const nlohmann::json& j) { return j.is_number() ? j.get<double>() : kNaN; }

inline QStringList axisNames(const nlohmann::json& study) {
  QStringList names;
  for (const auto& p : study.value("space", nlohmann::json::array())) {
    const QString key = QString::fromStdString(p.value("key", ""));
    names << key.section('.', -1);
  }
  names << QString::fromStdString(study.value("metric", "value"));
  return names;
}

}  // namespace studio::ui::study_json
