// Engine throughput against the hand-written PyTorch loop (reference_loop.py)
// on the same model, data, optimizer, schedule, batch and device. Prints
// both samples/s and their ratio (engine / Python; the goal is >= 1).
// Usage: bench_engine [--steps N] [--rounds R] [--device cpu|cuda] [--python PATH] [--set key=value]...
// (--set changes the engine's settings only: a variant's cost, not a comparison)
// Each round runs both; the medians are compared.
#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

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

// Engine samples/s over the steps after the first `warmup` (as the Python
// loop also excludes its warm-up), from the wall times of the live records.
double engineRun(studio::TrainConfig c, int warmup, std::string& device) {
  studio::Session s;
  s.start(c);
  double tWarm = -1, tEnd = -1;
  auto drain = [&] {
    studio::MetricRecord r;
    while (s.pollMetric(r)) {
      if (r.kind != studio::RecordKind::Train) continue;
      if (r.step == warmup) tWarm = r.wallSeconds;
      if (r.step == c.train.max_steps) tEnd = r.wallSeconds;
    }
  };
  while (!s.wait(std::chrono::milliseconds(100))) drain();
  drain();
  const studio::RunSummary e = s.summary();
  if (e.status != "completed" || tWarm < 0 || tEnd <= tWarm) {
    std::fprintf(stderr, "engine run %s: %s\n", e.status.c_str(), e.error.c_str());
    std::exit(1);
  }
  device = e.device;
  return static_cast<double>((c.train.max_steps - warmup) * c.train.batch_size) / (tEnd - tWarm);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int steps = 300, rounds = 3;
  const int warmup = 20;
  std::string device = "cpu", python = STUDIO_BENCH_PYTHON;
  std::vector<std::string> sets;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    if (k == "--steps") steps = std::atoi(argv[i + 1]);
    else if (k == "--device") device = argv[i + 1];
    else if (k == "--python") python = argv[i + 1];
    else if (k == "--rounds") rounds = std::atoi(argv[i + 1]);
    else if (k == "--set") sets.push_back(argv[i + 1]);
  }
  studio::log::setConsoleLevel("warn");
  studio::TrainConfig c = studio::loadConfigFile(studio::presetPath(studio::defaultPresetDir(), "fashion-mnist-cnn"));
  for (const auto& s : sets) studio::applyOverride(c, s);
  c.train.max_steps = warmup + steps;
  c.train.log_every_steps = warmup;  // records flush at the warm-up's end and every 20 steps after
  c.evaluation.every_steps = 1000000;  // timing only: no evaluation inside the measured steps
  c.performance.device = device;
  c.output.dir = "/tmp/training-studio-bench";
  const bool cuda = device != "cpu";
  // On a GPU: the engine's eager step and its CUDA graph, against Python's
  // eager loop and the same Python step captured whole in a CUDA graph.
  struct Variant {
    std::string name;
    bool engine;
    std::string mode;  // engine: performance.cuda_graphs; Python: eager | graph
    std::vector<double> sps;
  };
  std::vector<Variant> variants = {{"engine", true, "off", {}}, {"PyTorch loop", false, "eager", {}}};
  if (cuda) {
    variants[0].name = "engine, eager step";
    variants.push_back({"engine, CUDA graph", true, "on", {}});
    variants.push_back({"PyTorch loop, CUDA graph", false, "graph", {}});
  }
  std::string deviceName;
  // Alternate the variants, so a slow spell of a shared machine hits all.
  for (int r = 0; r < rounds; ++r) {
    for (auto& v : variants) {
      if (v.engine) {
        c.performance.cuda_graphs = v.mode;
        v.sps.push_back(engineRun(c, warmup, deviceName));
        continue;
      }
      const int threads = deviceName.find('(') == std::string::npos
                              ? 0
                              : std::atoi(deviceName.substr(deviceName.find('(') + 1).c_str());
      const std::string cmd = python + " " + STUDIO_BENCH_DIR + "/reference_loop.py --steps " + std::to_string(steps) +
                              " --batch " + std::to_string(c.train.batch_size) + " --device " +
                              (cuda ? "cuda" : "cpu") + " --threads " + std::to_string(threads) + " --mode " + v.mode;
      const std::string out = run(cmd);
      try {
        v.sps.push_back(nlohmann::json::parse(out)["samples_per_second"].get<double>());
      } catch (const std::exception&) {
        std::fprintf(stderr, "reference loop failed: %s\n%s\n", cmd.c_str(), out.c_str());
        return 1;
      }
    }
    std::printf("round %d:", r + 1);
    for (const auto& v : variants) std::printf("  %s %.0f", v.name.c_str(), v.sps.back());
    std::printf(" samples/s\n");
  }
  std::printf("preset fashion-mnist-cnn, %d timed steps of batch %d after %d warm-up steps, on %s, median of %d\n",
              steps, c.train.batch_size, warmup, deviceName.c_str(), rounds);
  for (const auto& v : variants) std::printf("%-28s %10.0f samples/s\n", v.name.c_str(), median(v.sps));
  const double e = median(variants[0].sps), p = median(variants[1].sps);
  std::printf("ratio engine / PyTorch:      %10.3f\n", e / p);
  if (cuda) {
    const double eg = median(variants[2].sps), pg = median(variants[3].sps);
    std::printf("ratio graph / eager engine:  %10.3f\n", eg / e);
    std::printf("ratio engine graph / PyTorch graph: %.3f\n", eg / pg);
  }
  return 0;
}
