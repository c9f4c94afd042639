// Engine throughput against the hand-written PyTorch loops (reference_loop.py)
// on the same model, data, optimizer, schedule, batch and device: Python's
// eager loop, the model through torch.compile(mode="reduce-overhead"), and
// (CUDA) the whole step captured in one CUDA graph; the engine's eager step
// and (CUDA) its own CUDA graph. Every variant runs once a round, the rounds
// alternate (a slow spell of a shared machine hits all), medians compared.
//
// Usage: bench_engine [--matrix] [--smoke] [--device cpu|cuda] [--rounds R]
//                     [--model cnn|mlp] [--batch B] [--width W] [--steps N]
//                     [--case model:batch:width:steps]... [--no-compile]
//                     [--python PATH] [--set key=value]... [--ops]
//  --matrix: the standard cases of issue 8 for the device (the presets'
//            fashion-mnist-mlp, overhead-bound, and fashion-mnist-cnn at
//            batch 128 and 512, and the CNN at a compute-bound width), then
//            one table of all of them. Without it: one case.
//  --smoke: every case of the run for 20 timed steps of at most 32 examples, one round, without
//           torch.compile: that each path still runs to its table (make
//           bench-smoke), in seconds; its figures are not measurements.
//  --set changes the engine's settings only: a variant's cost, not a comparison.
//  --ops: instead of timing, the ATen operators the engine dispatches per step
//         (top level, every thread: each is a kernel launch or more on a GPU;
//         a replayed CUDA graph counts as one), from two runs of different
//         lengths, so that set-up and the end of the run cancel out.
#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "studio/log.h"
#include "studio/session.h"
#include "train/step/op_count.h"

namespace {

std::string shell(const std::string& cmd) {
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
  if (e.status != studio::RunStatus::completed || tWarm < 0 || tEnd <= tWarm) {
    std::fprintf(stderr, "engine run %s: %s%s\n", studio::statusName(e.status).c_str(), e.error.c_str(),
                 e.status == studio::RunStatus::completed
                     ? " (no record at the warm-up's step or at train.max_steps: the run ended "
                       "at another step)"
                     : "");
    std::exit(1);
  }
  device = e.device;
  return static_cast<double>((c.train.max_steps - warmup) * c.train.batch_size) / (tEnd - tWarm);
}

std::map<std::string, long> countOps(studio::TrainConfig c, std::string& device) {
  std::map<std::string, long> ops;
  studio::Session s;
  {
    const studio::OpCount count;
    s.start(c);
    studio::MetricRecord r;
    while (!s.wait(std::chrono::milliseconds(100)))
      while (s.pollMetric(r)) {
      }
    ops = count.byName();
  }
  const studio::RunSummary e = s.summary();
  if (e.status != studio::RunStatus::completed) {
    std::fprintf(stderr, "engine run %s: %s\n", studio::statusName(e.status).c_str(), e.error.c_str());
    std::exit(1);
  }
  device = e.device;
  return ops;
}

// Operators per step of the engine's step on `c` (cuda_graphs as set there).
void printOpsPerStep(studio::TrainConfig c, int steps, std::string& device) {
  const int64_t base = c.train.max_steps;
  const auto a = countOps(c, device);
  c.train.max_steps = base + steps;
  const auto b = countOps(c, device);
  std::vector<std::pair<double, std::string>> perStep;
  double total = 0;
  for (const auto& [name, n] : b) {
    const double d = static_cast<double>(n - (a.count(name) ? a.at(name) : 0)) / steps;
    total += d;
    if (d >= 0.05) perStep.push_back({d, name});
  }
  std::sort(perStep.rbegin(), perStep.rend());
  std::printf("  engine, cuda_graphs %s: %.1f ATen operators per step; the most:",
              c.performance.cuda_graphs.name().c_str(), total);
  for (size_t i = 0; i < perStep.size() && i < 24; ++i)
    std::printf("%s %s %.1f", i ? "," : "", perStep[i].second.c_str(), perStep[i].first);
  std::printf("\n");
  std::fflush(stdout);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Case {
  std::string model;  // cnn | mlp: the preset fashion-mnist-<model>
  int batch = 128;
  int width = 0;  // 0: the preset's
  int steps = 300;
};

struct Variant {
  std::string name;
  bool engine = false;
  std::string mode;  // engine: performance.cuda_graphs; Python: eager | compile | graph
  std::vector<double> sps;
  std::string failed;  // a Python variant that could not run (its first lines of output)
  double med() const { return sps.empty() ? 0.0 : median(sps); }
};

struct Result {
  Case c;
  int width = 0;
  std::vector<Variant> variants;
  bool ok = true;
  const Variant* find(const std::string& name) const {
    for (const auto& v : variants)
      if (v.name == name && !v.sps.empty()) return &v;
    return nullptr;
  }
  double best(bool engine) const {
    double b = 0;
    for (const auto& v : variants)
      if (v.engine == engine) b = std::max(b, v.med());
    return b;
  }
};

struct Bench {
  std::string device, python;
  int rounds = 3;
  bool compile = true;
  std::vector<std::string> sets;
  std::string deviceName;
  static constexpr int warmup = 20;

  // The case's settings; its steps rounded up to whole flushes of records.
  studio::TrainConfig config(Case& k) const {
    k.steps = (k.steps + warmup - 1) / warmup * warmup;  // the engine's records flush every `warmup` steps
    studio::TrainConfig c =
        studio::loadConfigFile(studio::presetPath(studio::defaultPresetDir(), "fashion-mnist-" + k.model));
    for (const auto& s : sets) studio::applyOverride(c, s);
    c.train.batch_size = k.batch;
    if (k.width > 0) c.model.width = k.width;
    c.train.max_steps = warmup + k.steps;
    c.train.epochs = 0;  // max_steps alone ends the run: a preset's epochs may end before it (351 steps, not 620)
    c.train.log_every_steps = warmup;    // records flush at the warm-up's end and every 20 steps after
    c.evaluation.every_steps = 1000000;  // timing only: no evaluation inside the measured steps
    c.data.test_limit = 512;  // the run's final test, after the timed steps, on a few batches, not 10,000 images
    c.performance.device = device;
    c.output.dir = "/tmp/training-studio-bench";
    return c;
  }

  // --ops: the engine's operators per step, eager and (CUDA) recorded.
  void opsPerStep(Case k) {
    studio::TrainConfig c = config(k);
    std::printf("\n%s, batch %d, width %d: operators per step over %d steps after %d\n", c.name.c_str(), k.batch,
                static_cast<int>(c.model.width), k.steps, warmup + k.steps);
    for (const char* mode : {"off", "on"}) {
      if (device == "cpu" && std::string(mode) == "on") continue;
      c.performance.cuda_graphs.setName(mode);
      printOpsPerStep(c, k.steps, deviceName);
    }
  }

  Result run(Case k) {
    const bool cuda = device != "cpu";
    studio::TrainConfig c = config(k);
    Result r{k, static_cast<int>(c.model.width), {}, true};
    r.variants.push_back({cuda ? "engine, eager step" : "engine", true, "off", {}, ""});
    if (cuda) r.variants.push_back({"engine, CUDA graph", true, "on", {}, ""});
    r.variants.push_back({"PyTorch eager", false, "eager", {}, ""});
    if (compile) r.variants.push_back({"PyTorch compile", false, "compile", {}, ""});
    if (cuda) r.variants.push_back({"PyTorch CUDA graph", false, "graph", {}, ""});
    std::printf("\n%s, batch %d, width %d: %d timed steps after %d warm-up steps, %d round(s)\n", c.name.c_str(),
                k.batch, r.width, k.steps, warmup, rounds);
    std::fflush(stdout);
    for (int round = 0; round < rounds; ++round) {
      // Each round starts with the next variant: none is always first
      // (a shared machine's slow spells and warm caches even out).
      for (size_t n = 0; n < r.variants.size(); ++n) {
        auto& v = r.variants[(n + static_cast<size_t>(round)) % r.variants.size()];
        if (v.engine) {
          c.performance.cuda_graphs.setName(v.mode);
          v.sps.push_back(engineRun(c, warmup, deviceName));
          continue;
        }
        if (!v.failed.empty()) continue;
        const int threads = deviceName.find('(') == std::string::npos
                                ? 0
                                : std::atoi(deviceName.substr(deviceName.find('(') + 1).c_str());
        const std::string cmd = python + " " + STUDIO_BENCH_DIR + "/reference_loop.py --model " + k.model +
                                " --width " + std::to_string(r.width) + " --steps " + std::to_string(k.steps) +
                                " --batch " + std::to_string(k.batch) + " --device " + (cuda ? "cuda" : "cpu") +
                                " --threads " + std::to_string(threads) + " --mode " + v.mode + " 2>&1";
        const std::string out = shell(cmd);
        // The JSON line is the last line; compilers may print warnings before it.
        const auto brace = out.rfind("\n{");
        try {
          v.sps.push_back(
              nlohmann::json::parse(out.substr(brace == std::string::npos ? 0 : brace + 1))["samples_per_second"]
                  .get<double>());
        } catch (const std::exception&) {
          v.failed = out.substr(0, 600);
          std::fprintf(stderr, "%s could not run (%s):\n%s\n", v.name.c_str(), cmd.c_str(), v.failed.c_str());
          if (v.mode == "eager") {  // the comparison itself is missing
            r.ok = false;
            return r;
          }
        }
      }
      std::printf("round %d:", round + 1);
      for (const auto& v : r.variants)
        if (!v.sps.empty()) std::printf("  %s %.0f", v.name.c_str(), v.sps.back());
      std::printf(" samples/s\n");
      std::fflush(stdout);
    }
    std::printf("on %s, medians:\n", deviceName.c_str());
    for (const auto& v : r.variants)
      if (!v.sps.empty()) std::printf("  %-22s %10.0f samples/s\n", v.name.c_str(), v.med());
    const double eager = r.find("PyTorch eager")->med();
    std::printf("  ratio engine / PyTorch eager:          %.3f\n", r.best(true) / eager);
    std::printf("  ratio engine / best PyTorch variant:   %.3f\n", r.best(true) / r.best(false));
    if (cuda) {
      const double eg = r.find("engine, CUDA graph") ? r.find("engine, CUDA graph")->med() : 0.0;
      std::printf("  ratio graph / eager engine:            %.3f\n", eg / r.find("engine, eager step")->med());
      if (const Variant* pg = r.find("PyTorch CUDA graph"))
        std::printf("  ratio engine graph / PyTorch graph:    %.3f\n", eg / pg->med());
    }
    return r;
  }
};

// One Markdown table of every case (for bench/RESULTS.md).
void printTable(const std::vector<Result>& results, const std::string& deviceName) {
  const bool cuda = results.front().find("engine, eager step") != nullptr;
  std::printf("\nsamples/s, medians, on %s:\n\n", deviceName.c_str());
  std::vector<std::string> cols =
      cuda ? std::vector<std::string>{"engine, eager step", "engine, CUDA graph"} : std::vector<std::string>{"engine"};
  for (const char* p : {"PyTorch eager", "PyTorch compile", "PyTorch CUDA graph"})
    if (cuda || std::string(p) != "PyTorch CUDA graph") cols.push_back(p);
  std::printf("| model | batch | width |");
  for (const auto& c : cols) std::printf(" %s |", c.c_str());
  std::printf(" engine / PyTorch eager | engine / best PyTorch |\n|---|---|---|");
  for (size_t i = 0; i < cols.size() + 2; ++i) std::printf("---|");
  std::printf("\n");
  for (const auto& r : results) {
    std::printf("| %s | %d | %d |", r.c.model.c_str(), r.c.batch, r.width);
    for (const auto& c : cols) {
      const Variant* v = r.find(c);
      if (v)
        std::printf(" %.0f |", v->med());
      else
        std::printf(" - |");
    }
    std::printf(" %.3f | %.3f |\n", r.best(true) / r.find("PyTorch eager")->med(), r.best(true) / r.best(false));
  }
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 3;
  bool matrix = false, compile = true, ops = false, smoke = false;
  std::string device = "cpu", python = STUDIO_BENCH_PYTHON;
  Case one{"cnn", 128, 0, 300};
  std::vector<std::string> sets;
  std::vector<Case> extra;  // --case
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    const bool hasValue = i + 1 < argc;
    if (k == "--matrix")
      matrix = true;
    else if (k == "--smoke")
      smoke = true;
    else if (k == "--no-compile")
      compile = false;
    else if (k == "--ops")
      ops = true;
    else if (k == "--steps" && hasValue)
      one.steps = std::atoi(argv[++i]);
    else if (k == "--batch" && hasValue)
      one.batch = std::atoi(argv[++i]);
    else if (k == "--width" && hasValue)
      one.width = std::atoi(argv[++i]);
    else if (k == "--model" && hasValue)
      one.model = argv[++i];
    else if (k == "--device" && hasValue)
      device = argv[++i];
    else if (k == "--python" && hasValue)
      python = argv[++i];
    else if (k == "--rounds" && hasValue)
      rounds = std::atoi(argv[++i]);
    else if (k == "--set" && hasValue)
      sets.push_back(argv[++i]);
    else if (k == "--case" && hasValue) {
      Case c{"", 128, 0, 300};
      char model[16] = {};
      if (std::sscanf(argv[++i], "%15[a-z]:%d:%d:%d", model, &c.batch, &c.width, &c.steps) != 4 ||
          (std::string(model) != "cnn" && std::string(model) != "mlp") || c.batch < 1 || c.width < 0 || c.steps < 1) {
        std::fprintf(stderr,
                     "bench_engine: --case is model:batch:width:steps, model cnn or mlp, width 0 for the preset's\n");
        return 2;
      }
      c.model = model;
      extra.push_back(c);
    } else {
      std::fprintf(stderr, "bench_engine: unknown or incomplete option '%s'\n", k.c_str());
      return 2;
    }
  }
  if ((one.model != "cnn" && one.model != "mlp") || one.batch < 1 || one.steps < 1 || rounds < 1) {
    std::fprintf(stderr, "bench_engine: --model is cnn or mlp; --batch, --steps and --rounds are positive\n");
    return 2;
  }
  studio::log::setConsoleLevel("warn");
  const bool cuda = device != "cpu";
  // Steps per case: a few seconds of the engine's time each on the device.
  std::vector<Case> cases;
  if (!extra.empty())
    cases = extra;
  else if (!matrix)
    cases.push_back(one);
  else if (cuda)
    cases = {{"mlp", 128, 0, 2000},
             {"mlp", 512, 0, 1000},
             {"cnn", 128, 0, 1000},
             {"cnn", 512, 0, 500},
             {"cnn", 512, 128, 200}};
  else
    cases = {
        {"mlp", 128, 0, 2000}, {"mlp", 512, 0, 600}, {"cnn", 128, 0, 200}, {"cnn", 512, 0, 60}, {"cnn", 128, 128, 40}};
  if (smoke) {
    std::vector<Case> small;
    for (auto c : cases) {
      c.steps = std::min(c.steps, 20);
      c.batch = std::min(c.batch, 32);
      // The matrix's batch sizes alike at 32: each path once.
      const bool again = std::any_of(small.begin(), small.end(), [&](const Case& o) {
        return o.model == c.model && o.batch == c.batch && o.width == c.width;
      });
      if (!again) small.push_back(c);
    }
    cases = small;
    rounds = 1;
    compile = false;
  }
  Bench bench{device, python, rounds, compile, sets, {}};
  if (ops) {
    for (const auto& c : cases) bench.opsPerStep(c);
    return 0;
  }
  std::vector<Result> results;
  for (const auto& c : cases) {
    results.push_back(bench.run(c));
    if (!results.back().ok) return 1;
  }
  if (results.size() > 1) printTable(results, bench.deviceName);
  return 0;
}
