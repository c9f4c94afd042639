#pragma once
// training-studio-cli audit (--preset NAME | --config FILE) [--set key=value ...] [--folds 5] [--parallel N]
//   [--similarity 0.99] [--neighbours 10] [--residual-z 3] [--out DIR]
// training-studio-cli audit --resume AUDIT_DIR [--parallel N]
// K-fold cross-validation, out-of-fold outputs, label issues by confident
// learning (regression: residuals), duplicates, outliers (studio/audit.h).
// Thread: the CLI's main thread.

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

#include "cli_settings.h"
#include "studio/audit.h"

namespace studio::cli {

class AuditCommand {
 public:
  explicit AuditCommand(CLI::App& app);
  bool chosen() const { return m_cmd->parsed(); }
  // runSession: the CLI's own loop for one session (progress, Ctrl-C).
  // Exit status: 0 done, 130 stopped (resume with --resume), or throws
  // InputError for the caller's handler.
  // stops: the CLI's signals while folds run at once (--parallel), passed
  // on to their processes.
  int run(const std::function<int(Session&)>& runSession, const ParallelStops& stops);

 private:
  CLI::App* m_cmd = nullptr;
  SettingsSource m_settings;
  std::string m_out, m_resume;
  AuditOptions m_options;
  CLI::Option* m_parallel = nullptr;
};

}  // namespace studio::cli
