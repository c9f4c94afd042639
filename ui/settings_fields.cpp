#include "ui/settings_fields.h"

#include <nlohmann/json.hpp>

namespace studio::ui {
namespace {

using T = FieldType;

std::vector<FieldSpec> makeFields() {
  std::vector<FieldSpec> f;
  auto add = [&](std::string path, std::string group, std::string label, T type, std::string tip,
                 std::vector<std::string> choices = {}) {
    f.push_back({std::move(path), std::move(group), std::move(label), type, std::move(choices), std::move(tip)});
  };
  const std::string model = "Model", data = "Data", train = "Training", opt = "Optimizer", sched = "Schedule",
                    prec = "Precision & memory", perf = "Performance", eval = "Evaluation", out = "Output";

  add("model.kind", model, "Architecture", T::Choice,
      "mlp: fully connected, fastest; cnn: small conv net, a good default for images; resnet: residual blocks, "
      "most accurate and slowest.", {"mlp", "cnn", "resnet"});
  add("model.width", model, "Width", T::Int,
      "Hidden units (mlp) or base channels (cnn, resnet); wider learns more but costs time and memory.");
  add("model.depth", model, "Depth", T::Int, "Hidden layers (mlp), conv stages (cnn) or residual blocks (resnet).");
  add("model.dropout", model, "Dropout", T::Real,
      "Fraction of features zeroed before the classifier while training; helps when the model overfits.");

  add("data.dataset", data, "Dataset", T::Choice, "Which MNIST-format dataset the folder holds.",
      {"fashion-mnist", "mnist"});
  add("data.root", data, "Folder", T::Path,
      "Folder with train-/t10k- images and labels in IDX format (.gz or raw); Debian: dataset-fashion-mnist.");
  add("data.train_limit", data, "Training images (0: all)", T::Int,
      "Train on only the first N images; for quick trials of settings.");
  add("data.test_limit", data, "Test images (0: all)", T::Int, "Evaluate on only the first N test images.");
  add("data.val_fraction", data, "Validation fraction", T::Real,
      "Share of the training images held out for evaluation during the run, so the test set stays unseen.");
  add("data.normalize", data, "Normalise", T::Bool,
      "Subtract the training images' mean and divide by their std; almost always helps optimisation.");
  add("data.augment_flip", data, "Random horizontal flip", T::Bool,
      "Mirror training images at random; more variety, less overfitting on longer runs.");
  add("data.augment_crop", data, "Random crop padding (px)", T::Int,
      "Pad by this many pixels and crop back at a random offset (0: off); less overfitting.");

  add("train.epochs", train, "Epochs", T::Int, "Passes over the training images.");
  add("train.max_steps", train, "Max optimizer steps (0: epochs decide)", T::Int,
      "Stop after this many optimizer steps, if that comes before the epochs end.");
  add("train.batch_size", train, "Batch size", T::Int,
      "Images per forward/backward pass (micro-batch); larger is faster per image until memory runs out.");
  add("train.accumulation_steps", train, "Gradient accumulation", T::Int,
      "Micro-batches summed per optimizer step: the effective batch of a larger batch in the memory of a small one.");
  add("train.grad_clip_norm", train, "Gradient clipping (L2 norm, 0: off)", T::Real,
      "Scale gradients down when their global norm exceeds this; tames loss spikes with high learning rates.");
  add("train.seed", train, "Seed", T::Int, "Fixes initialisation, shuffling and augmentation: same seed, same run.");
  add("train.log_every_steps", train, "Read metrics every N steps", T::Int,
      "Metrics stay on the device and are read in one sync every N steps; larger is faster on a GPU.");

  add("optimizer.kind", opt, "Optimizer", T::Choice,
      "sgd: momentum SGD, best with a schedule; adam: adaptive, forgiving; adamw: Adam with decoupled weight decay.",
      {"sgd", "adam", "adamw"});
  add("optimizer.lr", opt, "Learning rate", T::Real,
      "Step size; the schedule scales it (OneCycle and cyclic set their own peak).");
  add("optimizer.weight_decay", opt, "Weight decay", T::Real,
      "Pulls weights toward zero each step; regularises (decoupled in AdamW).");
  add("optimizer.momentum", opt, "Momentum", T::Real, "SGD: fraction of the last update carried into the next; 0.9 typical.");
  add("optimizer.nesterov", opt, "Nesterov", T::Bool, "SGD: look-ahead momentum; often converges a little faster.");
  add("optimizer.beta1", opt, "Beta 1", T::Real, "Adam: decay of the gradient's running mean (its momentum).");
  add("optimizer.beta2", opt, "Beta 2", T::Real, "Adam: decay of the squared gradient's running mean.");
  add("optimizer.eps", opt, "Epsilon", T::Real, "Adam: added to the denominator for numerical stability.");

  add("schedule.kind", sched, "Schedule", T::Choice,
      "How the learning rate changes over the run: onecycle (warm up, then anneal) trains fastest for a fixed budget.",
      {"constant", "step", "cosine", "linear", "onecycle", "cyclic"});
  add("schedule.warmup_steps", sched, "Warm-up steps", T::Int,
      "Ramp the learning rate up linearly over the first steps; steadies the start with large rates or batches.");
  add("schedule.warmup_start_factor", sched, "Warm-up start factor", T::Real,
      "Fraction of the learning rate at the first warm-up step.");
  add("schedule.step.step_size", sched, "Step: every N steps", T::Int, "Multiply the learning rate by gamma every N steps.");
  add("schedule.step.gamma", sched, "Step: gamma", T::Real, "The factor applied at each step of the staircase.");
  add("schedule.cosine.t_max", sched, "Cosine: period (0: the run)", T::Int,
      "Steps over which the rate falls along a half cosine to its minimum.");
  add("schedule.cosine.eta_min", sched, "Cosine: minimum rate", T::Real, "The learning rate at the end of the cosine.");
  add("schedule.linear.start_factor", sched, "Linear: start factor", T::Real, "Fraction of the rate at the start.");
  add("schedule.linear.end_factor", sched, "Linear: end factor", T::Real, "Fraction of the rate after the ramp.");
  add("schedule.linear.total_iters", sched, "Linear: ramp steps", T::Int, "Steps over which the factor moves.");
  add("schedule.onecycle.max_lr", sched, "OneCycle: peak rate", T::Real,
      "The highest learning rate, reached after the warm-up part; find it with a learning-rate range test.");
  add("schedule.onecycle.total_steps", sched, "OneCycle: steps (0: the run)", T::Int,
      "Length of the cycle in optimizer steps.");
  add("schedule.onecycle.pct_start", sched, "OneCycle: warm-up share", T::Real,
      "Share of the cycle spent rising to the peak.");
  add("schedule.onecycle.anneal", sched, "OneCycle: anneal", T::Choice, "Shape of the rise and fall.", {"cos", "linear"});
  add("schedule.onecycle.div_factor", sched, "OneCycle: start divisor", T::Real, "Starting rate = peak / this.");
  add("schedule.onecycle.final_div_factor", sched, "OneCycle: final divisor", T::Real,
      "Final rate = starting rate / this; a low final rate settles the weights.");
  add("schedule.onecycle.three_phase", sched, "OneCycle: three phases", T::Bool,
      "Fall back to the starting rate symmetrically, then anneal further (fast.ai style).");
  add("schedule.onecycle.cycle_momentum", sched, "OneCycle: cycle momentum", T::Bool,
      "Lower momentum (or beta1) while the rate is high, raise it as the rate falls.");
  add("schedule.onecycle.base_momentum", sched, "OneCycle: low momentum", T::Real, "Momentum at the peak rate.");
  add("schedule.onecycle.max_momentum", sched, "OneCycle: high momentum", T::Real, "Momentum at the low rates.");
  add("schedule.cyclic.base_lr", sched, "Cyclic: low rate", T::Real, "Bottom of each cycle.");
  add("schedule.cyclic.max_lr", sched, "Cyclic: high rate", T::Real, "Top of each cycle.");
  add("schedule.cyclic.step_size_up", sched, "Cyclic: steps up", T::Int, "Steps from the low to the high rate.");
  add("schedule.cyclic.step_size_down", sched, "Cyclic: steps down (0: same)", T::Int,
      "Steps from the high back to the low rate.");
  add("schedule.cyclic.mode", sched, "Cyclic: mode", T::Choice,
      "triangular: same cycles; triangular2: halve the height each cycle; exp_range: shrink by gamma per step.",
      {"triangular", "triangular2", "exp_range"});
  add("schedule.cyclic.gamma", sched, "Cyclic: gamma", T::Real, "exp_range: height factor per step.");
  add("schedule.cyclic.cycle_momentum", sched, "Cyclic: cycle momentum", T::Bool,
      "Move momentum opposite to the rate within each cycle.");
  add("schedule.cyclic.base_momentum", sched, "Cyclic: low momentum", T::Real, "Momentum at the high rate.");
  add("schedule.cyclic.max_momentum", sched, "Cyclic: high momentum", T::Real, "Momentum at the low rate.");

  add("precision.mode", prec, "Precision", T::Choice,
      "fp16/bf16 run matmuls and convolutions in half precision under autocast: faster on tensor-core GPUs, "
      "half the activation memory. fp16 needs loss scaling; bf16 does not.",
      {"fp32", "fp16", "bf16"});
  add("precision.loss_scale.init_scale", prec, "Loss scale: initial", T::Real,
      "fp16: the loss is multiplied by this before backward so small gradients do not underflow.");
  add("precision.loss_scale.growth_factor", prec, "Loss scale: growth", T::Real,
      "fp16: multiply the scale by this after a run of finite steps.");
  add("precision.loss_scale.backoff_factor", prec, "Loss scale: back-off", T::Real,
      "fp16: multiply the scale by this (and skip the step) when a gradient overflows.");
  add("precision.loss_scale.growth_interval", prec, "Loss scale: growth interval", T::Int,
      "fp16: finite steps in a row before the scale grows.");
  add("performance.channels_last", prec, "Channels-last", T::Bool,
      "Store images and conv weights as NHWC; faster convolutions with fp16/bf16 on tensor cores.");
  add("performance.zero_grad_to_none", prec, "Zero grad to none", T::Bool,
      "Free gradients between steps instead of filling them with zeros: less memory traffic.");

  add("performance.device", perf, "Device", T::Text,
      "auto (the GPU when there is one), cpu, cuda or cuda:N.");
  add("performance.cudnn_benchmark", perf, "cuDNN benchmark", T::Bool,
      "Time the convolution algorithms once and keep the fastest; helps when input shapes do not change.");
  add("performance.tf32", perf, "TF32 matmuls", T::Bool,
      "Let fp32 matmuls and convolutions use TF32 tensor cores (Ampere and later): much faster, slightly less exact.");
  add("performance.threads", perf, "CPU threads (0: all cores)", T::Int, "Intra-op threads when training on the CPU.");
  add("loader.mode", perf, "Loader", T::Choice,
      "device: keep the whole dataset on the device (fastest for small datasets); workers: threads prepare batches "
      "ahead; auto: device when it fits.",
      {"auto", "device", "workers"});
  add("loader.workers", perf, "Loader workers", T::Int, "Threads preparing batches in parallel with training.");
  add("loader.prefetch", perf, "Prefetch per worker", T::Int, "Batches each worker keeps ready ahead of the GPU.");
  add("loader.pin_memory", perf, "Pinned memory", T::Bool,
      "Page-locked host buffers, so copies to the GPU are asynchronous (non-blocking).");

  add("evaluation.every_steps", eval, "Evaluate every N steps (0: each epoch)", T::Int,
      "How often the model is evaluated (without autograd) on the validation or test images.");
  add("evaluation.batch_size", eval, "Evaluation batch size", T::Int,
      "Images per evaluation pass; no gradients are kept, so it can be larger than training's.");

  add("name", out, "Run name", T::Text, "Names the run's folder (after its date and time).");
  add("output.dir", out, "Runs folder", T::Path, "Where run folders are made: settings, metrics, log and checkpoints.");
  add("output.checkpoint_every_steps", out, "Checkpoint every N steps (0: at evaluations)", T::Int,
      "Extra checkpoints between evaluations; a stopped or crashed run resumes from the last one.");
  add("output.save_best", out, "Keep the best checkpoint", T::Bool,
      "Also keep the checkpoint with the best evaluation accuracy (checkpoints/best.ckpt).");
  return f;
}

bool startsWith(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

std::string str(const nlohmann::json& j, const char* pointer) {
  const auto p = nlohmann::json::json_pointer(pointer);
  return j.contains(p) && j.at(p).is_string() ? j.at(p).get<std::string>() : std::string();
}

}  // namespace

const std::vector<FieldSpec>& settingsFields() {
  static const std::vector<FieldSpec> fields = makeFields();
  return fields;
}

const std::vector<std::string>& settingsGroups() {
  static const std::vector<std::string> groups = {"Model",    "Data",     "Training",    "Optimizer", "Schedule",
                                                  "Precision & memory", "Performance", "Evaluation", "Output"};
  return groups;
}

bool fieldRelevant(const std::string& path, const nlohmann::json& s) {
  const std::string optimizer = str(s, "/optimizer/kind");
  const std::string schedule = str(s, "/schedule/kind");
  if (path == "optimizer.momentum" || path == "optimizer.nesterov") return optimizer == "sgd";
  if (path == "optimizer.beta1" || path == "optimizer.beta2" || path == "optimizer.eps") return optimizer != "sgd";
  if (startsWith(path, "schedule.warmup")) return schedule != "onecycle" && schedule != "cyclic";
  for (const char* kind : {"step", "cosine", "linear", "onecycle", "cyclic"})
    if (startsWith(path, std::string("schedule.") + kind + ".")) return schedule == kind;
  if (startsWith(path, "precision.loss_scale.")) return str(s, "/precision/mode") == "fp16";
  if (path == "loader.workers" || path == "loader.prefetch" || path == "loader.pin_memory")
    return str(s, "/loader/mode") != "device";
  return true;
}

std::string jsonPointer(const std::string& dotted) {
  std::string p = "/" + dotted;
  for (char& c : p)
    if (c == '.') c = '/';
  return p;
}

}  // namespace studio::ui
