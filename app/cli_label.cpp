#include "cli_label.h"

#include <cstdio>

#include "cli_progress.h"
#include "studio/csv_table.h"
#include "studio/errors.h"
#include "studio/file_io.h"

namespace studio::cli {

LabelCommand::LabelCommand(CLI::App& app) {
  m_cmd = app.add_subcommand("label", "Help label images: the order to label a folder's images in");
  m_cmd->add_option("--suggest", m_run,
                    "A classifier's run or export folder: order the --data images by its uncertainty, highest first, "
                    "near-copies of images before them last")
      ->required();
  m_cmd->add_option("--data", m_data, "The folder of images to order (its sub-folders too)")->required();
  m_cmd->add_option("--out", m_out, "The order's CSV file (default order.csv)");
  m_cmd->add_option("--strategy", m_strategy,
                    "least-confidence (1 - the top probability; default), margin (1 - the top two's difference) "
                    "or entropy (of the probabilities)");
  m_cmd->add_option("--similarity", m_options.similarity,
                    "Near-copies: images whose penultimate features have at least this cosine similarity with one "
                    "placed before them go last (default 0.95; above 1: no guard)");
  m_cmd->add_option("--device", m_options.device, "auto (default), cpu, cuda or cuda:N");
  m_cmd->add_flag("--overwrite", m_overwrite, "Replace the --out file when it exists");
}

int LabelCommand::run() {
  m_options.strategy.setName(m_strategy);
  if (!m_options.strategy.known())
    throw InputError("--strategy " + m_strategy + ": give least-confidence, margin or entropy");
  checkOutputFile(m_out, "--out", m_overwrite, {m_data});
  CliProgress bar(stderr);
  Progress p;
  p.state = SessionState::Running;
  p.phase = "ordering";
  const Suggestion s = suggestLabellingOrder(m_run, m_data, m_options, [&](int64_t done, int64_t total) {
    p.phaseDone = done;
    p.phaseTotal = total;
    bar.update(p);
    return true;
  });
  bar.endLine();
  char number[64];
  std::string csv = "rank,file,uncertainty,predicted,probability,near_copy_of\n";
  for (size_t i = 0; i < s.order.size(); ++i) {
    const SuggestedImage& e = s.order[i];
    std::snprintf(number, sizeof number, "%.9g", e.uncertainty);
    csv += std::to_string(i + 1) + "," + csvField(e.file) + "," + number + "," +
           csvField(s.classes[static_cast<size_t>(e.predicted)]) + ",";
    std::snprintf(number, sizeof number, "%.6g", static_cast<double>(e.probability));
    csv += std::string(number) + "," + csvField(e.nearCopyOf) + "\n";
  }
  writeFileAtomically(m_out, csv);
  for (const auto& why : s.skipped) std::fprintf(stderr, "skipped %s\n", why.c_str());
  std::printf("ordered %zu images by %s with %s", s.order.size(), m_options.strategy.name().c_str(),
              s.model.c_str());
  if (s.guarded)
    std::printf("; %lld near-%s (cosine similarity %g or more) moved last\n", static_cast<long long>(s.nearCopies),
                s.nearCopies == 1 ? "copy" : "copies", m_options.similarity);
  else
    std::printf("; no near-copy guard (%s)\n", m_options.similarity > 1 ? "--similarity above 1"
                                                                          : "the model gives no features to compare");
  std::printf("wrote %s\n", m_out.c_str());
  return 0;
}

}  // namespace studio::cli
