#pragma once
// training-studio-cli audit (--preset NAME | --config FILE) [--set key=value ...] [--folds 5] [--similarity 0.99]
// [--neighbours 10] [--out DIR] training-studio-cli audit --resume AUDIT_DIR K-fold cross-validation, out-of-fold
// probabilities, label issues by confident learning, exact duplicates (studio/audit.h). Thread: the CLI's main thread.

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
  int run(const std::function<int(Session&)>& runSession);

 private:
  CLI::App* m_cmd = nullptr;
  SettingsSource m_settings;
  std::string m_out, m_resume;
  AuditOptions m_options;
};

}  // namespace studio::cli
