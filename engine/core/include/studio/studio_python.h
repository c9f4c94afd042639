#pragma once
// The studio's Python: the interpreter that runs the search's runner and the
// export's check (Optuna, ONNX and ONNX Runtime installed by
// packaging/setup.sh), and the scripts the studio ships for it.

#include <string>

namespace studio {

// STUDIO_PYTHON, else the build's venv (the one make configure used), else
// the package's /opt/training-studio/venv, else python3 on PATH.
std::string studioPython();

// A script under resources/ (relative, say "export/studio_export.py"): the
// environment variable `override` when set, else the copy beside the
// binaries or in the package's share/, else the source tree's.
std::string studioScript(const std::string& relative, const char* override);

}  // namespace studio
