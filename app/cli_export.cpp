#include <cstdio>
#include <filesystem>

#include "cli_commands.h"

namespace studio::cli {

ExportCommand::ExportCommand(CLI::App& app) {
  m_cmd = app.add_subcommand("export", "Write a run's model, checkpoint, settings and evaluations to a folder");
  m_cmd->add_option("run_dir", m_run, "The run folder")->required();
  m_cmd->add_option("--out", m_out, "Destination folder")->required()->check(kNamesSomething);
  addChoiceOption(m_cmd, "--which", m_options.which,
                  "auto (default): the weights of the run's test figures (the best checkpoint's for a run with a "
                  "validation split, else the last); best or last checkpoint; or ema: the weights' moving average");
  addChoiceOption(m_cmd, "--format", m_options.format,
                  "torch (default): the PyTorch files; onnx: model.onnx too, each file checked in the studio's "
                  "Python against the studio's own outputs on the run's test examples (ONNX Runtime for "
                  "model.onnx)");
  m_cmd->add_flag("--check", m_options.check, "With --format torch: check the PyTorch files in Python as well");
  m_cmd->add_option("--opset", m_options.opset, "The ONNX opset (default 18)");
  m_cmd->add_option("--tolerance", m_options.tolerance,
                    "The largest difference from the studio's outputs a file may show (default 1e-4)");
  addChoiceOption(m_cmd, "--quantize", m_options.quantize,
                  "none (default) or int8: model.int8.onnx by ONNX Runtime's static quantization, with its test "
                  "figure and CPU speed against model.onnx's");
  addChoiceOption(m_cmd, "--calibration", m_options.calibration,
                  "INT8's calibration: minmax (default), entropy or percentile");
  m_cmd->add_option("--calibration-examples", m_options.calibrationExamples,
                    "Training examples INT8 is calibrated on (default 300)");
  m_cmd->add_option("--max-drop", m_options.maxDrop,
                    "Points of the test figure INT8 may lose before the export says so (default 1)");
}

int ExportCommand::run() {
  const ExportResult r = exportRun(m_run, m_out, m_options);
  if (!r.note.empty()) std::fprintf(stderr, "note: %s\n", r.note.c_str());
  for (const auto& line : r.checks) std::printf("%s\n", line.c_str());
  std::printf("exported %s (%s checkpoint) to %s:", m_run.c_str(), r.checkpoint.c_str(), m_out.c_str());
  for (const auto& f : r.files) std::printf(" %s", std::filesystem::relative(f, m_out).c_str());
  std::printf("\n");
  return 0;
}

}  // namespace studio::cli
