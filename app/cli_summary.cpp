#include <cstdio>

#include "cli_commands.h"
#include "studio/dataset_info.h"
#include "studio/model_summary.h"

namespace studio::cli {
namespace {

std::string total(const std::vector<int64_t>& v) {
  int64_t sum = 0;
  for (int64_t x : v) sum += x;
  return std::to_string(sum);
}

int printSummary(const TrainConfig& c) {
  const DatasetDescription d = describeDataset(c);
  std::printf("data (%s): %s per example, %zu classes\n", d.format.name().c_str(), d.input.text().c_str(),
              d.classNames.size());
  // A detector's counts are its boxes (crowds left out, as training leaves them).
  if (boxesTask(d.task)) std::printf("  boxes of each split and class:\n");
  std::printf("  training   %8s  from %s\n", total(d.trainCounts).c_str(), d.trainFrom.c_str());
  if (d.valSize() > 0) std::printf("  validation %8s  from %s\n", total(d.valCounts).c_str(), d.valFrom.c_str());
  std::printf("  test       %8s  from %s\n", total(d.testCounts).c_str(), d.testFrom.c_str());
  if (!c.data.corrections.empty())
    std::printf("  data.corrections: %lld removed, %lld relabelled (%s; your files are unchanged)\n",
                static_cast<long long>(d.correctionsRemoved), static_cast<long long>(d.correctionsRelabelled),
                c.data.corrections.c_str());
  std::printf("  %-24s %10s %10s %10s\n", "class", "training", "validation", "test");
  for (size_t k = 0; k < d.classNames.size(); ++k)
    std::printf("  %-24s %10lld %10lld %10lld\n", d.classNames[k].c_str(), static_cast<long long>(d.trainCounts[k]),
                static_cast<long long>(d.valCounts[k]), static_cast<long long>(d.testCounts[k]));
  std::printf("\n%s", formatModelSummary(summarizeModel(c)).c_str());
  return 0;
}

}  // namespace

SummaryCommand::SummaryCommand(CLI::App& app) {
  m_summary = app.add_subcommand("summary", "Print the data's classes and splits and the model's layers");
  m_settings.addTo(m_summary);
  m_presets = app.add_subcommand("presets", "List the presets");
}

int SummaryCommand::run() {
  if (m_presets->parsed()) {
    for (const auto& name : presetNames(defaultPresetDir())) std::printf("%s\n", name.c_str());
    return 0;
  }
  const TrainConfig c = m_settings.load();
  noteTorchScript(c);
  return printSummary(c);
}

}  // namespace studio::cli
