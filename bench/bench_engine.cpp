// Engine throughput against the hand-written PyTorch loop (reference_loop.py)
// on the same model, data, optimizer, schedule, batch and device. Prints
// both samples/s and their ratio (engine / Python; the goal is >= 1).
// Usage: bench_engine [--steps N] [--device cpu|cuda] [--python PATH]
#include <array>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "studio/log.h"
#include "studio/session.h"

namespace {

std::string run(const std::string& cmd) {
  std::array<char, 4096> buf{};
  std::string out;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
  if (!pipe) return out;
  while (fgets(buf.data(), static_cast<int>(buf.size()), pipe.get())) out += buf.data();
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  int steps = 300;
  std::string device = "cpu", python = STUDIO_BENCH_PYTHON;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    if (k == "--steps") steps = std::atoi(argv[i + 1]);
    else if (k == "--device") device = argv[i + 1];
    else if (k == "--python") python = argv[i + 1];
  }
  studio::log::setConsoleLevel("warn");
  studio::TrainConfig c = studio::loadConfigFile(studio::presetPath(studio::defaultPresetDir(), "fashion-mnist-cnn"));
  c.train.max_steps = steps;
  c.train.log_every_steps = 50;
  c.evaluation.every_steps = 1000000;  // timing only: no evaluation inside the measured steps
  c.performance.device = device;
  c.output.dir = "/tmp/training-studio-bench";
  studio::Session s;
  s.start(c);
  while (!s.wait(std::chrono::milliseconds(100))) {
    studio::MetricRecord r;
    while (s.pollMetric(r)) {}
  }
  const studio::RunSummary e = s.summary();
  if (e.status != "completed") {
    std::fprintf(stderr, "engine run %s: %s\n", e.status.c_str(), e.error.c_str());
    return 1;
  }
  const int threads = std::atoi(e.device.substr(e.device.find('(') + 1).c_str());
  const std::string cmd = python + " " + STUDIO_BENCH_DIR + "/reference_loop.py --steps " + std::to_string(steps) +
                          " --batch " + std::to_string(c.train.batch_size) + " --device " +
                          (device == "cpu" ? "cpu" : "cuda") + " --threads " + std::to_string(threads);
  const std::string out = run(cmd);
  double ref = 0;
  try {
    ref = nlohmann::json::parse(out)["samples_per_second"].get<double>();
  } catch (const std::exception&) {
    std::fprintf(stderr, "reference loop failed: %s\n%s\n", cmd.c_str(), out.c_str());
    return 1;
  }
  std::printf("preset fashion-mnist-cnn, %d steps of batch %d on %s\n", steps, c.train.batch_size, e.device.c_str());
  std::printf("engine samples/s:          %10.0f\n", e.samplesPerSecond);
  std::printf("PyTorch loop samples/s:    %10.0f\n", ref);
  std::printf("ratio engine / PyTorch:    %10.3f\n", e.samplesPerSecond / ref);
  return 0;
}
