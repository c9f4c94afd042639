#include "run/checkpoint.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>
#include <c10/util/Exception.h>
#include <torch/serialize/archive.h>

#include <filesystem>
#include <sstream>

#include "run/run_recorder.h"

namespace studio {
namespace fs = std::filesystem;

void saveCheckpoint(const std::vector<std::string>& paths, CheckpointParts p) {
  torch::serialize::OutputArchive a, model, optim, scaler;
  p.model->save(model);
  p.optimizer.save(optim);
  p.scaler.save(scaler);
  a.write("model", model);
  a.write("optimizer", optim);
  a.write("scaler", scaler);
  a.write("skipped", p.skipped, true);
  const auto& c = p.counters;
  a.write("step", c10::IValue(c.step));
  a.write("epoch", c10::IValue(c.epoch));
  a.write("batch_in_epoch", c10::IValue(c.batchInEpoch));
  a.write("lr_multiplier", c10::IValue(c.lrMultiplier));
  a.write("best_accuracy", c10::IValue(c.bestAccuracy));
  a.write("wall_seconds", c10::IValue(c.wallSeconds));
  a.write("lr_changes", c10::IValue(c.lrChanges.dump()));
  a.write("rng_cpu", at::detail::getDefaultCPUGenerator().get_state(), true);
  const torch::Device dev = p.skipped.device();
  if (dev.is_cuda()) a.write("rng_cuda", at::globalContext().defaultGenerator(dev).get_state(), true);
  // Serialise in memory, then write the file ourselves: LibTorch's file
  // writer throws from its destructor when the disk fills up (terminating
  // the process), and our writer reports it and removes the partial file.
  std::ostringstream bytes;
  try {
    a.save_to(bytes);
  } catch (const c10::Error& e) {
    throw RunIoError("cannot serialise checkpoint " + paths.front() + ": " + e.what_without_backtrace());
  }
  const std::string data = bytes.str();
  for (const auto& path : paths) writeFileAtomically(path, data);  // names the file on failure
}

static torch::serialize::InputArchive openArchive(const std::string& path, const torch::Device& device) {
  if (!fs::exists(path)) throw std::runtime_error("checkpoint " + path + " not found");
  torch::serialize::InputArchive a;
  try {
    a.load_from(path, device);
  } catch (const c10::Error& e) {
    throw std::runtime_error("checkpoint " + path + " is unreadable or damaged: " + e.what_without_backtrace());
  }
  return a;
}

void loadModelWeights(const std::string& path, torch::nn::Sequential& model) {
  auto a = openArchive(path, torch::Device(torch::kCPU));
  torch::serialize::InputArchive m;
  try {
    a.read("model", m);
    model->load(m);
  } catch (const c10::Error& e) {
    throw std::runtime_error("checkpoint " + path + " does not match the model of its settings: " +
                             e.what_without_backtrace());
  }
}

void loadCheckpoint(const std::string& path, CheckpointParts p, const torch::Device& device) {
  auto a = openArchive(path, device);
  try {
    torch::serialize::InputArchive model, optim, scaler;
    a.read("model", model);
    p.model->load(model);
    a.read("optimizer", optim);
    p.optimizer.load(optim);
    a.read("scaler", scaler);
    p.scaler.load(scaler);
    torch::Tensor skipped;
    a.read("skipped", skipped, true);
    {
      torch::NoGradGuard noGrad;
      p.skipped.copy_(skipped);
    }
    auto& c = p.counters;
    c10::IValue v;
    a.read("step", v);
    c.step = v.toInt();
    a.read("epoch", v);
    c.epoch = v.toInt();
    a.read("batch_in_epoch", v);
    c.batchInEpoch = v.toInt();
    a.read("lr_multiplier", v);
    c.lrMultiplier = v.toDouble();
    a.read("best_accuracy", v);
    c.bestAccuracy = v.toDouble();
    a.read("wall_seconds", v);
    c.wallSeconds = v.toDouble();
    a.read("lr_changes", v);
    c.lrChanges = nlohmann::json::parse(v.toStringRef());
    torch::Tensor rng;
    a.read("rng_cpu", rng, true);
    auto restore = [](at::Generator gen, const torch::Tensor& state) {
      std::lock_guard<std::mutex> lock(gen.mutex());
      gen.set_state(state.cpu());
    };
    restore(at::detail::getDefaultCPUGenerator(), rng);
    if (device.is_cuda() && a.try_read("rng_cuda", rng, true))
      restore(at::globalContext().defaultGenerator(device), rng);
  } catch (const c10::Error& e) {
    throw std::runtime_error("checkpoint " + path + " does not match this run's settings: " +
                             e.what_without_backtrace());
  }
}

}  // namespace studio
