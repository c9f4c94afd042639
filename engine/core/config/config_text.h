#pragma once
// How settings' values appear in messages, shared by the settings reader
// (train_config.cpp), validate() (settings_rules.cpp), the schema's ranges
// (settings_schema.cpp) and the COCO reader's field errors
// (data_files/box_annotations.cpp). Torch-free.
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace studio {

// A JSON value as a message shows it: scalars as written, containers by their
// size only, long strings cut, bytes that are not UTF-8 replaced.
std::string shown(const nlohmann::json& j);
// A number as messages write it: up to 10 significant digits.
std::string num(double v);

}  // namespace studio
