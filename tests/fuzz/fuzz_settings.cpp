// Settings as a person gives them: a JSON settings file (parsed, read,
// validated, described) and --set key=value strings. Every input ends in
// settings or in the studio's own errors.
#include <nlohmann/json.hpp>

#include "fuzz_input.h"
#include "studio/train_config.h"

using namespace studio;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  // The file, through loadConfigFile's own reading.
  fuzz::InputFile file(data, size);
  try {
    const TrainConfig c = loadConfigFile(file.path());
    (void)validate(c);
    (void)toJson(c).dump();
  } catch (const ConfigFileError&) {
  }
  // The same bytes as a --set value, split at the first newline into several.
  TrainConfig c;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find('\n', start), text.size());
    try {
      applyOverride(c, text.substr(start, end - start));
    } catch (const ConfigFileError&) {
    }
    start = end + 1;
  }
  (void)validate(c);
  return 0;
}
