#include <cmath>
#include <cstdio>

#include "cli_commands.h"

namespace studio::cli {

ProbeCommands::ProbeCommands(CLI::App& app) {
  m_lrFind = app.add_subcommand("lr-find", "Learning-rate range test: the loss over exponentially growing rates");
  m_findSettings.addTo(m_lrFind);
  m_lrFind->add_option("--min", m_find.lrMin, "Lowest learning rate (default 1e-6)");
  m_lrFind->add_option("--max", m_find.lrMax, "Highest learning rate (default 1)");
  m_lrFind->add_option("--steps", m_find.steps, "Optimizer steps of the sweep (default 100)");
  m_lrFind->add_option("--out", m_out, "Folder for run folders (output.dir)")->check(kNamesSomething);

  m_batchFind =
      app.add_subcommand("batch-find", "The largest micro-batch whose training step fits in the device's memory");
  m_batchSettings.addTo(m_batchFind);
  m_batchFind->add_option("--max", m_batch.maxBatch, "The largest micro-batch to try (default 65536)");
  m_batchFind->add_option("--out", m_out, "Folder for run folders (output.dir)")->check(kNamesSomething);
}

namespace {

// A probe's settings, with --out and the TorchScript note.
TrainConfig probeSettings(const SettingsSource& settings, const std::string& out) {
  TrainConfig config = settings.load();
  if (!out.empty()) config.output.dir = out;
  noteTorchScript(config);
  return config;
}

}  // namespace

int ProbeCommands::run(const RunSession& runSession) {
  return m_lrFind->parsed() ? lrFind(runSession) : batchFind(runSession);
}

int ProbeCommands::lrFind(const RunSession& runSession) {
  const TrainConfig config = probeSettings(m_findSettings, m_out);
  Session session;
  session.findLearningRate(config, m_find);
  const int rc = runSession(session);
  const RunSummary s = session.summary();
  if (rc == 0 && std::isfinite(s.lrFind.suggestion)) {
    std::printf("learning-rate range test: %s\n", s.lrFind.end.c_str());
    std::printf("  suggested learning rate: %.3g (the smoothed loss falls fastest there)\n", s.lrFind.suggestion);
    std::printf("  lowest smoothed loss at: %.3g\n", s.lrFind.minimum);
    // The setting that acts under these settings' schedule: a cycle's
    // peak (OneCycle, cyclic) may go up to a tenth of the lowest loss's rate.
    const std::string target = learningRateSetting(config);
    const bool peak = target != "optimizer.lr";
    std::printf("  use it: --set %s=%.3g\n", target.c_str(),
                peak && s.lrFind.minimum / 10 > s.lrFind.suggestion ? s.lrFind.minimum / 10 : s.lrFind.suggestion);
  } else if (rc == 0) {
    std::printf("learning-rate range test: %s; too few steps to suggest a rate\n", s.lrFind.end.c_str());
  }
  return rc;
}

int ProbeCommands::batchFind(const RunSession& runSession) {
  const TrainConfig config = probeSettings(m_batchSettings, m_out);
  Session session;
  session.findBatchSize(config, m_batch);
  const int rc = runSession(session);
  const RunSummary s = session.summary();
  if (rc == 0 && s.batchFind.largest > 0) {
    const long long effective = static_cast<long long>(config.train.batch_size) * config.train.accumulation_steps;
    std::printf("largest micro-batch that fits: %lld on %s", static_cast<long long>(s.batchFind.largest),
                s.device.c_str());
    if (std::isfinite(s.batchFind.limitMiB)) std::printf(" (%.0f MiB)", s.batchFind.limitMiB);
    std::printf(
        "\n  for the effective batch of %lld: --set train.batch_size=%lld --set "
        "train.accumulation_steps=%lld\n",
        effective, static_cast<long long>(s.batchFind.micro), static_cast<long long>(s.batchFind.accumulation));
  }
  return rc;
}

}  // namespace studio::cli
