#include "run/export_check.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "data/batch_loader.h"
#include "data/data_loading.h"
#include "models/model.h"
#include "studio/data_plan.h"
#include "studio/errors.h"
#include "studio/file_io.h"
#include "studio/run_layout.h"
#include "studio/studio_python.h"
#include "tensors/safetensors_file.h"

namespace studio {

namespace {

constexpr int64_t kMostTestExamples = 10000;
constexpr int64_t kMostTestBytes = int64_t{256} << 20;

int64_t bytesPerExample(const Dataset& set) {
  const Examples one = set.slice(0, 1);
  return one.x.numel() * static_cast<int64_t>(one.x.element_size());
}

}  // namespace

Examples spreadExamples(const Dataset& set, int64_t n) {
  n = std::min(n, set.size());
  const torch::Tensor idx = torch::arange(n, torch::kInt64).mul(set.size()).div(n, "floor");
  return set.gather(idx.to(set.device()));
}

CheckData loadCheckData(const TrainConfig& cfg) {
  CheckData d;
  DataSplits& data = d.data;
  try {
    LoadProgress quiet{[](const std::string&, int64_t, int64_t) {}, [] { return false; }};
    data = loadData(cfg, planData(cfg), quiet);
  } catch (const std::exception& e) {
    throw InputError(std::string("export: the check runs the exported model on the run's own examples, and the "
                                 "run's data could not be loaded: ") +
                     e.what() +
                     "; put the data back where the run's settings.json says, or export with --format torch");
  }
  CheckExamples& out = d.facts;
  std::shared_ptr<ExampleSet>& source = d.source;
  source = data.test;
  out.split = "test";
  if (!source || source->size() == 0) std::tie(source, out.split) = std::pair(data.val, std::string("validation"));
  if (!source || source->size() == 0) std::tie(source, out.split) = std::pair(data.train, std::string("training"));
  if (!source || source->size() == 0) throw InputError("export: the run's data holds no examples to check on");
  out.splitSize = source->size();
  out.trainCounts = data.trainCounts;
  out.testCounts = data.testCounts;
  return d;
}

CheckExamples writeCheckExamples(const TrainConfig& cfg, const nlohmann::json& info, Model& model,
                                 const ExportOptions& o, const std::string& file) {
  const CheckData loaded = loadCheckData(cfg);
  const DataSplits& data = loaded.data;
  const std::shared_ptr<ExampleSet>& source = loaded.source;
  CheckExamples out = loaded.facts;

  // The run's evaluation: its recorded normalisation, its centre crop.
  const bool image = data.input.features == 0;
  LoaderOptions t;
  t.norm = Normalization::recorded(info.value(run_files::run_info::kNormalization, nlohmann::json::object()), image,
                                   image ? data.input.channels : data.input.features, torch::kCPU);
  if (image && data.stored.larger(data.input))
    std::tie(t.cropHeight, t.cropWidth) = std::pair(data.input.height, data.input.width);

  const Examples parity = spreadExamples(*source, o.parityExamples);
  std::vector<std::pair<std::string, torch::Tensor>> tensors{{"parity_x", parity.x.contiguous()},
                                                             {"studio_outputs", studioOutputs(model, parity.x, t)}};
  if (o.quantize == ExportQuantize::int8) {
    const int64_t most = std::min(kMostTestExamples, std::max<int64_t>(1, kMostTestBytes / bytesPerExample(*source)));
    const Examples test = spreadExamples(*source, most);
    tensors.emplace_back("test_x", test.x.contiguous());
    torch::Tensor y = test.y;
    if (data.regression() && data.targetStd.size() == static_cast<size_t>(y.size(1)))  // the data's units
      y = y.to(torch::kFloat64)
              .mul(torch::tensor(data.targetStd, torch::kFloat64))
              .add(torch::tensor(data.targetMean, torch::kFloat64))
              .to(torch::kFloat32);
    tensors.emplace_back("test_y", y.contiguous());
    const auto& train = data.train && data.train->size() > 0 ? data.train : source;
    tensors.emplace_back("calibration_x", spreadExamples(*train, o.calibrationExamples).x.contiguous());
  }
  writeExamplesFile(file, tensors, out);
  return out;
}

torch::Tensor studioOutputs(Model& model, const torch::Tensor& raw, const LoaderOptions& t) {
  model.to(torch::kCPU);
  model.setTraining(false);
  torch::NoGradGuard noGrad;
  std::vector<torch::Tensor> outputs;
  for (int64_t i = 0; i < raw.size(0); i += 64) {
    const torch::Tensor part = raw.slice(0, i, std::min(i + 64, raw.size(0)));
    outputs.push_back(model.forward(transformBatch(part, t, 0, false)).to(torch::kFloat32).contiguous());
  }
  return torch::cat(outputs);
}

void writeExamplesFile(const std::string& file, const std::vector<std::pair<std::string, torch::Tensor>>& tensors,
                       const CheckExamples& facts) {
  writeFileAtomically(
      file, safetensorsBytes(tensors, {{"split", facts.split}, {"split_size", std::to_string(facts.splitSize)}}));
}

namespace {

// The check script with these arguments: its lines; its exit status mapped
// as runExportCheck says (`outDir` names where the kept files are).
std::vector<std::string> runCheckScript(const std::vector<std::string>& more, const std::string& outDir) {
  const std::string python = studioPython(), script = studioScript("export/studio_export.py", "STUDIO_EXPORT_CHECK");
  std::vector<std::string> args{python, "-B", script};
  args.insert(args.end(), more.begin(), more.end());
  int pipe[2];
  if (::pipe2(pipe, O_CLOEXEC) != 0) throw IoError("export: cannot start the check: no pipe");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, pipe[1], 2);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, python.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe[1]);
  if (rc != 0) {
    ::close(pipe[0]);
    throw InputError("export: cannot start the check with " + python + ": " + std::strerror(rc) +
                     "; run packaging/setup.sh (it installs onnx and onnxruntime into the studio's Python), or set "
                     "STUDIO_PYTHON to a Python that has torch, onnx and onnxruntime");
  }
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = ::read(pipe[0], buffer, sizeof buffer)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    text.append(buffer, static_cast<size_t>(n));
  }
  ::close(pipe[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  std::vector<std::string> lines;
  for (size_t at = 0; at < text.size();) {
    const size_t end = std::min(text.find('\n', at), text.size());
    if (end > at) lines.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  auto said = [&] {
    std::string s;
    for (const auto& l : lines) s += (s.empty() ? "" : "\n") + l;
    return s;
  };
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (code == 0) return lines;
  if (code == 1) throw ExportCheckFailed(said() + "\nthe files are kept in " + outDir + " for a look");
  if (code == 2) throw InputError(said());
  throw std::runtime_error("export: the check (" + script + ") ended with status " + std::to_string(code) + ":\n" +
                           said());
}

}  // namespace

std::vector<std::string> runExportCheck(const std::string& outDir, const std::string& examples, const ExportOptions& o,
                                        const std::string& keptIn) {
  char tolerance[32], drop[32];
  std::snprintf(tolerance, sizeof tolerance, "%.17g", o.tolerance);
  std::snprintf(drop, sizeof drop, "%.17g", o.maxDrop);
  return runCheckScript({"--export", outDir, "--examples", examples, "--format", o.format.name(), "--opset",
                         std::to_string(o.opset), "--quantize", o.quantize.name(), "--calibration",
                         o.calibration.name(), "--tolerance", tolerance, "--max-drop", drop},
                        keptIn);
}

}  // namespace studio
