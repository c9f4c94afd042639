// How a run trains: the Training, Optimizer, Schedule, Precision & memory,
// Performance, Evaluation and Output groups of the settings schema (the
// model's and the data's are in settings_schema.cpp, the augmentations' in
// settings_schema_augment.cpp).
#include "schema_builder.h"
#include "studio/metric_catalog.h"
#include "studio/model_kinds.h"
#include "studio/train_config.h"

namespace studio::schema {
namespace {

// off, or an evaluation figure of the metric catalog (the raw weights'; the
// search, not early stopping, follows the EMA's).
std::vector<std::string> earlyStoppingChoices() {
  std::vector<std::string> c{"off"};
  for (const auto& m : metricCatalog())
    if (m.kind == RecordKind::Eval && std::string(m.id).rfind("ema_", 0) != 0) c.emplace_back(m.id);
  return c;
}

}  // namespace

void addRunSettings(Fields& add) {
  const std::string train = "Training", opt = "Optimizer", sched = "Schedule", prec = "Precision & memory",
                    perf = "Performance", eval = "Evaluation", out = "Output";
  const Rule sgd{[](const TrainConfig& c) { return c.optimizer.kind == OptimizerKind::sgd; }, "optimizer.kind sgd"};
  const Rule adam{[](const TrainConfig& c) { return c.optimizer.kind != OptimizerKind::sgd; },
                  "optimizer.kind adam or adamw"};
  auto schedule = [](ScheduleKind kind) -> Rule {
    return {[kind](const TrainConfig& c) { return c.schedule.kind == kind; }, "schedule.kind " + nameOf(kind)};
  };
  // The first of the two to come ends the run (as Lightning's max_epochs and
  // max_steps); kMaxPlannedSteps bounds a plan that no machine could finish.
  range(add(SETTING(train.epochs), train, "Epochs", T::Int,
            "Passes over the training examples (0: train.max_steps alone decides)."),
        between(0, 1e6));
  range(add(SETTING(train.max_steps), train, "Max optimizer steps (0: epochs decide)", T::Int,
            "Stop after this many optimizer steps, if that comes before the epochs end."),
        between(0, static_cast<double>(kMaxPlannedSteps)));
  range(add(SETTING(train.batch_size), train, "Batch size", T::Int,
            "Examples per forward/backward pass (micro-batch); larger is faster per example until memory runs out."),
        between(1, 1 << 20));
  range(add(SETTING(train.accumulation_steps), train, "Gradient accumulation", T::Int,
            "Micro-batches summed per optimizer step: the effective batch of a larger batch in the memory of a small "
            "one."),
        between(1, 4096));
  range(add(SETTING(train.grad_clip_norm), train, "Gradient clipping (L2 norm, 0: off)", T::Real,
            "Scale gradients down when their global norm exceeds this; tames loss spikes with high learning rates."),
        atLeast(0));
  add(SETTING(train.seed), train, "Seed", T::Int,
      "Fixes initialisation, shuffling and augmentation: same seed, same run.");
  range(add(SETTING(train.log_every_steps), train, "Read metrics every N steps", T::Int,
            "Metrics stay on the device and are read in one sync every N steps; larger is faster on a GPU."),
        between(1, 100000));
  add(SETTING(train.on_nonfinite), train, "When the loss is not finite", T::Choice,
      "A step whose loss or gradients are NaN or infinite is never applied. stop: end the run (its last "
      "checkpoint kept); skip: go on without that step; rollback: go back to the last checkpoint with a "
      "lower learning rate.");
  const Rule rollback{[](const TrainConfig& c) { return c.train.on_nonfinite == OnNonfinite::rollback; },
                      "train.on_nonfinite rollback"};
  when(range(add(SETTING(train.rollback_lr_factor), train, "Rollback: learning-rate factor", T::Real,
                 "Each rollback multiplies the learning rate by this."),
             between(0, 1, true, true)),
       rollback);
  when(range(add(SETTING(train.max_rollbacks), train, "Rollback: at most", T::Int,
                 "Rollbacks before the run stops as diverged."),
             between(1, 100)),
       rollback);

  choices(add(SETTING(train.early_stopping.metric), train, "Early stopping", T::Choice,
              "End the run when this evaluation figure stops improving; the best checkpoint is kept "
              "(checkpoints/best.ckpt, export --which best)."),
          earlyStoppingChoices());
  const Rule early{[](const TrainConfig& c) { return c.train.early_stopping.metric != "off"; },
                   "a train.early_stopping.metric (not off)"};
  when(add(SETTING(train.early_stopping.mode), train, "Early stopping: better is", T::Choice,
           "min: lower is better; max: higher is better; auto: min for a loss or an error (RMSE, MAE, ECE), max "
           "for an accuracy, R\u00b2, mAP, F1 or AUC."),
       early);
  when(range(add(SETTING(train.early_stopping.patience), train, "Early stopping: patience (evaluations)", T::Int,
                 "Evaluations in a row without improvement before the run ends; evaluation.every_steps sets how "
                 "often they come."),
             between(1, 100000)),
       early);
  when(range(add(SETTING(train.early_stopping.min_delta), train, "Early stopping: least improvement", T::Real,
                 "An evaluation improves on the best only by more than this (0: any improvement)."),
             atLeast(0)),
       early);

  range(add(SETTING(train.ema.decay), train, "Weight average (EMA) decay", T::Real,
            "Keep an exponential moving average of the weights, evaluated beside them as a second curve and "
            "exported with export --which ema; 0: off, typical 0.99-0.9999."),
        between(0, 1, false, true));
  const Rule ema{[](const TrainConfig& c) { return c.train.ema.decay > 0; }, "train.ema.decay above 0"};
  when(range(add(SETTING(train.ema.every_steps), train, "Weight average: every N steps", T::Int,
                 "Update the average after every N optimizer steps."),
             atLeast(1)),
       ema);
  when(range(add(SETTING(train.ema.start_step), train, "Weight average: from step", T::Int,
                 "The first update copies the weights at this step; the average starts there."),
             atLeast(0)),
       ema);
  range(add(SETTING(train.finetune.freeze_epochs), train, "Fine-tune: head-only epochs", T::Int,
            "Train only the classifier (the head) for this many epochs, the rest of the model frozen, then "
            "unfreeze (fastai's fine_tune). 0: everything trains from the start."),
        atLeast(0));
  const Rule freezing{[](const TrainConfig& c) { return c.train.finetune.freeze_epochs > 0; },
                      "train.finetune.freeze_epochs above 0"};
  when(add(SETTING(train.finetune.freeze_batchnorm), train, "Fine-tune: freeze BatchNorm statistics", T::Bool,
           "While layers are frozen, their BatchNorm layers keep their running mean and variance (the pretrained "
           "statistics); off: they follow the new data."),
       freezing);
  when(add(SETTING(train.finetune.gradual), train, "Fine-tune: gradual unfreezing", T::Bool,
           "After the head-only epochs, unfreeze one more layer group each epoch, from the head down (ULMFiT), "
           "instead of all at once."),
       freezing);
  range(add(SETTING(train.finetune.backbone_lr_factor), train, "Fine-tune: first layers' learning-rate factor", T::Real,
            "Discriminative learning rates: the first layer group learns at the head's rate times this, the groups "
            "between at geometric steps (0.01 is fastai's slice(lr/100, lr)). 1: one rate for the whole model."),
        between(0, 1, true, false));
  when(add(SETTING(train.finetune.head_prefix), train, "Fine-tune: head parameters (TorchScript)", T::Text,
           "TorchScript models: the parameters whose names start with this (e.g. fc.) are the head; empty: the "
           "last group of parameters by their first name component."),
       Rule{[](const TrainConfig& c) { return isModel(c.model.kind, ModelFamily::torchscript); },
            "model.kind torchscript"},
       true);

  add(SETTING(optimizer.kind), opt, "Optimizer", T::Choice,
      "sgd: momentum SGD, best with a schedule; adam: adaptive, forgiving; adamw: Adam with decoupled weight "
      "decay.");
  range(add(SETTING(optimizer.lr), opt, "Learning rate", T::Real,
            "Step size; the schedule scales it (OneCycle and cyclic set their own rates)."),
        above(0))
      .noEffect = [](const TrainConfig& c) -> std::string {
    if (c.schedule.kind == ScheduleKind::onecycle)
      return "has no effect under schedule.kind onecycle: schedule.onecycle.max_lr sets the rates (it starts at "
             "max_lr / schedule.onecycle.div_factor)";
    if (c.schedule.kind == ScheduleKind::cyclic)
      return "has no effect under schedule.kind cyclic: schedule.cyclic.base_lr and schedule.cyclic.max_lr set the "
             "rates";
    return "";
  };
  range(add(SETTING(optimizer.weight_decay), opt, "Weight decay", T::Real,
            "Pulls weights toward zero each step; regularises (decoupled in AdamW)."),
        atLeast(0));
  when(range(add(SETTING(optimizer.momentum), opt, "Momentum", T::Real,
                 "SGD: fraction of the last update carried into the next; 0.9 typical."),
             between(0, 1, false, true)),
       sgd)
      .noEffect = [](const TrainConfig& c) -> std::string {
    if (c.schedule.kind == ScheduleKind::onecycle && c.schedule.onecycle.cycle_momentum)
      return "has no effect while schedule.onecycle.cycle_momentum is on: schedule.onecycle.base_momentum and "
             "schedule.onecycle.max_momentum set it";
    if (c.schedule.kind == ScheduleKind::cyclic && c.schedule.cyclic.cycle_momentum)
      return "has no effect while schedule.cyclic.cycle_momentum is on: schedule.cyclic.base_momentum and "
             "schedule.cyclic.max_momentum set it";
    return "";
  };
  when(add(SETTING(optimizer.nesterov), opt, "Nesterov", T::Bool,
           "SGD: look-ahead momentum; often converges a little faster."),
       sgd);
  when(range(add(SETTING(optimizer.beta1), opt, "Beta 1", T::Real,
                 "Adam: decay of the gradient's running mean (its momentum)."),
             between(0, 1, false, true)),
       adam);
  when(range(
           add(SETTING(optimizer.beta2), opt, "Beta 2", T::Real, "Adam: decay of the squared gradient's running mean."),
           between(0, 1, false, true)),
       adam);
  when(range(add(SETTING(optimizer.eps), opt, "Epsilon", T::Real,
                 "Adam: added to the denominator for numerical stability."),
             above(0)),
       adam);

  add(SETTING(schedule.kind), sched, "Schedule", T::Choice,
      "How the learning rate changes over the run: onecycle (warm up, then anneal) trains fastest for a fixed "
      "budget.");
  const Rule warms{[](const TrainConfig& c) {
                     return c.schedule.kind != ScheduleKind::onecycle && c.schedule.kind != ScheduleKind::cyclic;
                   },
                   "a schedule.kind other than onecycle and cyclic"};
  when(range(add(SETTING(schedule.warmup_steps), sched, "Warm-up steps", T::Int,
                 "Ramp the learning rate up linearly over the first steps; steadies the start with large rates or "
                 "batches."),
             atLeast(0)),
       warms);
  when(range(add(SETTING(schedule.warmup_start_factor), sched, "Warm-up start factor", T::Real,
                 "Fraction of the learning rate at the first warm-up step."),
             between(0, 1)),
       warms);
  when(range(add(SETTING(schedule.step.step_size), sched, "Step: every N steps", T::Int,
                 "Multiply the learning rate by gamma every N steps."),
             above(0)),
       schedule(ScheduleKind::step), true);
  when(range(add(SETTING(schedule.step.gamma), sched, "Step: gamma", T::Real,
                 "The factor applied at each step of the staircase."),
             above(0)),
       schedule(ScheduleKind::step), true);
  when(range(add(SETTING(schedule.cosine.t_max), sched, "Cosine: period (0: the run)", T::Int,
                 "Steps over which the rate falls along a half cosine to its minimum."),
             atLeast(0)),
       schedule(ScheduleKind::cosine), true);
  when(range(add(SETTING(schedule.cosine.eta_min), sched, "Cosine: minimum rate", T::Real,
                 "The learning rate at the end of the cosine."),
             atLeast(0)),
       schedule(ScheduleKind::cosine), true);
  when(range(add(SETTING(schedule.linear.start_factor), sched, "Linear: start factor", T::Real,
                 "Fraction of the rate at the start."),
             between(0, 1, true)),
       schedule(ScheduleKind::linear), true);
  when(range(add(SETTING(schedule.linear.end_factor), sched, "Linear: end factor", T::Real,
                 "Fraction of the rate after the ramp."),
             between(0, 1)),
       schedule(ScheduleKind::linear), true);
  when(range(add(SETTING(schedule.linear.total_iters), sched, "Linear: ramp steps", T::Int,
                 "Steps over which the factor moves."),
             above(0)),
       schedule(ScheduleKind::linear), true);
  const Rule one = schedule(ScheduleKind::onecycle), cyc = schedule(ScheduleKind::cyclic);
  when(range(add(SETTING(schedule.onecycle.max_lr), sched, "OneCycle: peak rate", T::Real,
                 "The highest learning rate, reached after the warm-up part; find it with a learning-rate range test."),
             above(0)),
       one, true);
  when(range(add(SETTING(schedule.onecycle.total_steps), sched, "OneCycle: steps (0: the run)", T::Int,
                 "Length of the cycle in optimizer steps."),
             atLeast(0)),
       one, true);
  when(range(add(SETTING(schedule.onecycle.pct_start), sched, "OneCycle: warm-up share", T::Real,
                 "Share of the cycle spent rising to the peak."),
             between(0, 1)),
       one, true);
  when(add(SETTING(schedule.onecycle.anneal), sched, "OneCycle: anneal", T::Choice, "Shape of the rise and fall."), one,
       true);
  when(range(add(SETTING(schedule.onecycle.div_factor), sched, "OneCycle: start divisor", T::Real,
                 "Starting rate = peak / this."),
             above(0)),
       one, true);
  when(range(add(SETTING(schedule.onecycle.final_div_factor), sched, "OneCycle: final divisor", T::Real,
                 "Final rate = starting rate / this; a low final rate settles the weights."),
             above(0)),
       one, true);
  when(add(SETTING(schedule.onecycle.three_phase), sched, "OneCycle: three phases", T::Bool,
           "Fall back to the starting rate symmetrically, then anneal further (fast.ai style)."),
       one, true);
  when(add(SETTING(schedule.onecycle.cycle_momentum), sched, "OneCycle: cycle momentum", T::Bool,
           "Lower momentum (or beta1) while the rate is high, raise it as the rate falls."),
       one, true);
  when(range(add(SETTING(schedule.onecycle.base_momentum), sched, "OneCycle: low momentum", T::Real,
                 "Momentum at the peak rate."),
             between(0, 1, false, true)),
       one, true);
  when(range(add(SETTING(schedule.onecycle.max_momentum), sched, "OneCycle: high momentum", T::Real,
                 "Momentum at the low rates."),
             between(0, 1, false, true)),
       one, true);
  when(range(add(SETTING(schedule.cyclic.base_lr), sched, "Cyclic: low rate", T::Real, "Bottom of each cycle."),
             above(0)),
       cyc, true);
  when(range(add(SETTING(schedule.cyclic.max_lr), sched, "Cyclic: high rate", T::Real, "Top of each cycle."), above(0)),
       cyc, true);
  when(range(add(SETTING(schedule.cyclic.step_size_up), sched, "Cyclic: steps up", T::Int,
                 "Steps from the low to the high rate."),
             above(0)),
       cyc, true);
  when(range(add(SETTING(schedule.cyclic.step_size_down), sched, "Cyclic: steps down (0: same)", T::Int,
                 "Steps from the high back to the low rate."),
             atLeast(0)),
       cyc, true);
  when(add(SETTING(schedule.cyclic.mode), sched, "Cyclic: mode", T::Choice,
           "triangular: same cycles; triangular2: halve the height each cycle; exp_range: shrink by gamma per "
           "step."),
       cyc, true);
  when(range(add(SETTING(schedule.cyclic.gamma), sched, "Cyclic: gamma", T::Real, "exp_range: height factor per step."),
             between(0, 1, true)),
       cyc, true);
  when(add(SETTING(schedule.cyclic.cycle_momentum), sched, "Cyclic: cycle momentum", T::Bool,
           "Move momentum opposite to the rate within each cycle."),
       cyc, true);
  when(range(add(SETTING(schedule.cyclic.base_momentum), sched, "Cyclic: low momentum", T::Real,
                 "Momentum at the high rate."),
             between(0, 1, false, true)),
       cyc, true);
  when(range(add(SETTING(schedule.cyclic.max_momentum), sched, "Cyclic: high momentum", T::Real,
                 "Momentum at the low rate."),
             between(0, 1, false, true)),
       cyc, true);

  add(SETTING(precision.mode), prec, "Precision", T::Choice,
      "fp16/bf16 run matmuls and convolutions in half precision under autocast: faster on tensor-core GPUs, "
      "half the activation memory. fp16 needs loss scaling; bf16 does not.");
  const Applies fp16 = [](const TrainConfig& c) { return c.precision.mode == PrecisionMode::fp16; };
  when(range(add(SETTING(precision.loss_scale.init_scale), prec, "Loss scale: initial", T::Real,
                 "fp16: the loss is multiplied by this before backward so small gradients do not underflow."),
             above(0)),
       fp16);
  when(range(add(SETTING(precision.loss_scale.growth_factor), prec, "Loss scale: growth", T::Real,
                 "fp16: multiply the scale by this after a run of finite steps."),
             above(1)),
       fp16);
  when(range(add(SETTING(precision.loss_scale.backoff_factor), prec, "Loss scale: back-off", T::Real,
                 "fp16: multiply the scale by this (and skip the step) when a gradient overflows."),
             between(0, 1, true, true)),
       fp16);
  when(range(add(SETTING(precision.loss_scale.growth_interval), prec, "Loss scale: growth interval", T::Int,
                 "fp16: finite steps in a row before the scale grows."),
             between(1, 1 << 30)),
       fp16);
  add(SETTING(performance.channels_last), prec, "Channels-last", T::Bool,
      "Store images and conv weights as NHWC; faster convolutions with fp16/bf16 on tensor cores.");
  add(SETTING(performance.zero_grad_to_none), prec, "Zero grad to none", T::Bool,
      "Free gradients between steps instead of filling them with zeros: less memory traffic.");
  add(SETTING(memory.activation_checkpointing), prec, "Activation checkpointing", T::Choice,
      "Keep only each segment's input in the forward pass and recompute its activations in the backward "
      "pass: less memory for some more compute (built-in models). auto: segments of about sqrt(blocks) "
      "blocks (Chen et al. 2016); every: segments of the given number of blocks.");
  when(range(add(SETTING(memory.checkpoint_blocks), prec, "Checkpoint: blocks per segment", T::Int,
                 "Blocks (residual blocks, conv stages, hidden layers) recomputed together."),
             between(1, 1 << 20)),
       Rule{[](const TrainConfig& c) { return c.memory.activation_checkpointing == ActivationCheckpointing::every; },
            "memory.activation_checkpointing every"});
  add(SETTING(memory.oom_backoff), prec, "Out of memory: back off", T::Bool,
      "When a step runs out of memory, halve the micro-batch and double the accumulation (same effective batch), "
      "mark it on the curves, and go on.");
  range(add(SETTING(memory.cpu_limit_mib), prec, "CPU memory limit (MiB, 0: none)", T::Int,
            "On the CPU: the most tensor memory the training may allocate after the data is loaded; past it the "
            "step runs out of memory as it would on a GPU."),
        atLeast(0));

  add(SETTING(performance.device), perf, "Device", T::Text, "auto (the GPU when there is one), cpu, cuda or cuda:N.");
  add(SETTING(performance.cudnn_benchmark), perf, "cuDNN benchmark", T::Bool,
      "Time the convolution algorithms once and keep the fastest; helps when input shapes do not change.");
  add(SETTING(performance.tf32), perf, "TF32 matmuls", T::Bool,
      "Let fp32 matmuls and convolutions use TF32 tensor cores (Ampere and later): much faster, slightly less exact.");
  add(SETTING(performance.cuda_graphs), perf, "CUDA graphs", T::Choice,
      "Record the whole optimizer step once as a CUDA graph and replay it: far fewer kernel launches. "
      "auto: when the step can be recorded (otherwise the log says why); on: an error when it cannot.");
  range(add(SETTING(performance.threads), perf, "CPU threads (0: all cores)", T::Int,
            "Intra-op threads when training on the CPU. 0: every core, or OMP_NUM_THREADS's number where that is "
            "set in the environment (as PyTorch takes it)."),
        between(0, 1024));
  range(add(SETTING(distributed.timeout_s), perf, "Several processes: timeout (s)", T::Int,
            "Under torchrun: how long a rank waits for the others (the rendezvous, a gradient exchange) before the "
            "run fails with a message naming the exchange."),
        between(1, 86400));
  range(add(SETTING(distributed.bucket_mib), perf, "Several processes: gradient bucket (MiB)", T::Int,
            "Under torchrun: gradients are summed over the processes in buckets of this size, each sent while the "
            "backward pass still runs."),
        between(1, 4096));
  add(SETTING(distributed.batchnorm), perf, "Several processes: BatchNorm", T::Choice,
      "Under torchrun: local normalises each process's share of the batch with its own statistics (the "
      "running statistics averaged at evaluations); sync uses the whole global batch's, as one process "
      "would (SyncBatchNorm; costs an exchange per BatchNorm layer).");
  add(SETTING(distributed.devices), perf, "Several processes: devices", T::Text,
      "Empty: one process. Otherwise the window starts the run in one process per entry through torchrun: GPU "
      "indices (0,1) or cpu (cpu,cpu); rank 0's curves show here.");
  add(SETTING(loader.mode), perf, "Loader", T::Choice,
      "device: keep the whole dataset on the device (fastest for small datasets); workers: threads prepare "
      "batches ahead; auto: device when it fits.");
  const Applies workers = [](const TrainConfig& c) { return c.loader.mode != LoaderMode::device; };
  when(range(add(SETTING(loader.workers), perf, "Loader workers", T::Int,
                 "Threads preparing batches in parallel with training."),
             between(0, 64)),
       workers);
  when(range(add(SETTING(loader.prefetch), perf, "Prefetch per worker", T::Int,
                 "Batches each worker keeps ready ahead of the GPU."),
             between(1, 64)),
       workers);
  when(add(SETTING(loader.pin_memory), perf, "Pinned memory", T::Bool,
           "Page-locked host buffers, so copies to the GPU are asynchronous (non-blocking)."),
       workers);

  range(add(SETTING(evaluation.every_steps), eval, "Evaluate every N steps (0: each epoch)", T::Int,
            "How often the model is evaluated (without autograd) on the validation or test examples."),
        atLeast(0));
  range(add(SETTING(evaluation.batch_size), eval, "Evaluation batch size", T::Int,
            "Examples per evaluation pass; no gradients are kept, so it can be larger than training's."),
        between(1, 1 << 20));

  add(SETTING(name), out, "Run name", T::Text, "Names the run's folder (after its date and time).");
  add(SETTING(output.dir), out, "Runs folder", T::Folder,
      "Where run folders are made: settings, metrics, log, checkpoints and evaluations. A relative folder is "
      "taken from the working folder (where the studio or the command was started), as --out is, not from a "
      "settings file's folder.");
  range(add(SETTING(output.checkpoint_every_steps), out, "Checkpoint every N steps (0: at evaluations)", T::Int,
            "Extra checkpoints between evaluations; a stopped or crashed run resumes from the last one."),
        atLeast(0));
  add(SETTING(output.save_best), out, "Keep the best checkpoint", T::Bool,
      "Also keep the checkpoint with the best evaluation accuracy (checkpoints/best.ckpt).");
  add(SETTING(output.keep_checkpoints), out, "Keep every evaluation's checkpoint", T::Bool,
      "Also keep each evaluation's checkpoint as checkpoints/step-N.ckpt, so a fork can start from any of them.");
}

}  // namespace studio::schema
