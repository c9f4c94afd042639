// The preset settings shipped in resources/presets. Torch-free (studio_core);
// studio/session.h includes it for the front-ends.
#pragma once

#include <string>
#include <vector>

namespace studio {

// Preset settings shipped in resources/presets (name -> file).
std::vector<std::string> presetNames(const std::string& presetDir);
std::string presetPath(const std::string& presetDir, const std::string& name);
// The preset folder: $STUDIO_PRESET_DIR, beside the executable, or the source tree's.
std::string defaultPresetDir();

}  // namespace studio
