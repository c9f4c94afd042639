// Preset lookup (studio/presets.h). Torch-free.
#include <unistd.h>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "studio/presets.h"

#ifndef STUDIO_SOURCE_PRESET_DIR
#define STUDIO_SOURCE_PRESET_DIR ""
#endif

namespace studio {
namespace fs = std::filesystem;

std::vector<std::string> presetNames(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::string presetPath(const std::string& dir, const std::string& name) {
  fs::path p = fs::path(dir) / (name + ".json");
  if (!fs::exists(p)) {
    std::string known;
    for (const auto& n : presetNames(dir)) known += (known.empty() ? "" : ", ") + n;
    throw std::invalid_argument("unknown preset \"" + name + "\" (known: " + known + ")");
  }
  return p.string();
}

std::string executablePath() {
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return "";
  exe[n] = '\0';
  return exe;
}

std::string shippedResource(const std::string& relative, bool folder) {
  const std::string exe = executablePath();
  if (exe.empty()) return "";
  const fs::path bin = fs::path(exe).parent_path();
  for (const fs::path& p :
       {bin / relative, bin / "../share/training-studio" / relative, bin / "../../share/training-studio" / relative})
    if (folder ? fs::is_directory(p) : fs::is_regular_file(p)) return p.lexically_normal().string();
  return "";
}

std::string defaultPresetDir() {
  if (const char* env = std::getenv("STUDIO_PRESET_DIR")) return env;
  if (const std::string shipped = shippedResource("presets", true); !shipped.empty()) return shipped;
  return STUDIO_SOURCE_PRESET_DIR;
}

}  // namespace studio
