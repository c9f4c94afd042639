#include "studio/studio_python.h"

#include <unistd.h>

#include <cstdlib>

#include "studio/presets.h"

namespace studio {

std::string studioPython() {
  if (const char* env = std::getenv("STUDIO_PYTHON"); env && *env) return env;
#ifdef STUDIO_PYTHON_DEFAULT
  if (::access(STUDIO_PYTHON_DEFAULT, X_OK) == 0) return STUDIO_PYTHON_DEFAULT;
#endif
  if (::access("/opt/training-studio/venv/bin/python", X_OK) == 0) return "/opt/training-studio/venv/bin/python";
  return "python3";
}

std::string studioScript(const std::string& relative, const char* override) {
  if (const char* env = override ? std::getenv(override) : nullptr; env && *env) return env;
  if (const std::string shipped = shippedResource(relative, false); !shipped.empty()) return shipped;
  return std::string(STUDIO_SOURCE_RESOURCES) + "/" + relative;
}

}  // namespace studio
