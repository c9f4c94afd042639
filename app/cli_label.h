#pragma once
// training-studio-cli label --suggest RUN --data FOLDER [--out order.csv] [--strategy least-confidence|margin|entropy]
//   [--similarity 0.95] [--device D] [--overwrite]
// The order to label a folder's images in by a trained classifier's
// uncertainty, near-copies last (studio/label_suggest.h; issue 62, item 5).
// Thread: the CLI's main thread.

#include <CLI/CLI.hpp>

#include <string>

#include "studio/label_suggest.h"

namespace studio::cli {

class LabelCommand {
 public:
  explicit LabelCommand(CLI::App& app);
  bool chosen() const { return m_cmd->parsed(); }
  // Exit status: 0, or throws InputError for the caller's handler.
  int run();

 private:
  CLI::App* m_cmd = nullptr;
  std::string m_run, m_data, m_out = "order.csv", m_strategy = "least-confidence";
  bool m_overwrite = false;
  SuggestOptions m_options;
};

}  // namespace studio::cli
