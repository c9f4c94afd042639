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

// The running program's file (/proc/self/exe); "" when it cannot be read.
std::string executablePath();
// A folder (or, `folder` false, a file) shipped beside the binaries, the
// first of <bin>/<relative> (the build folder),
// <bin>/../share/training-studio/<relative> (installed) and
// <bin>/../../share/training-studio/<relative> (the package's libexec);
// "" when none of them is one.
std::string shippedResource(const std::string& relative, bool folder);

}  // namespace studio
