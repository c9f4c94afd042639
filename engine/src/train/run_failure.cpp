#include "train/run_failure.h"

#include <c10/util/Exception.h>

#include "data/decoded_images.h"
#include "dist/process_group.h"
#include "studio/errors.h"
#include "studio/log.h"
#include "train/device_info.h"

namespace studio {

namespace {

std::string outOfMemory(const RunContext& c, const c10::OutOfMemoryError& e, bool& badInput) {
  const std::string where = describeDevice(c.where.device);
  const std::string limit = c.where.cpuMemory ? ", or raise memory.cpu_limit_mib" : "";
  const std::string what = e.what_without_backtrace();
  switch (c.activity) {
    case RunActivity::SettingUp:
      badInput = !limit.empty();
      return "out of memory on " + where + " while setting up, before any step (" + what +
             "): the model and its optimizer do not fit; use a smaller model" + limit;
    case RunActivity::Evaluating:
      return "out of memory on " + where + " evaluating after step " + std::to_string(c.position.step) +
             " with evaluation.batch_size " + std::to_string(c.cfg.evaluation.batch_size) + " (" + what +
             "): lower evaluation.batch_size" + limit + "; the run's last checkpoint is kept";
    case RunActivity::Training:
      break;
  }
  return "out of memory on " + where + " at step " + std::to_string(c.position.step + 1) + " with train.batch_size " +
         std::to_string(c.cfg.train.batch_size) +
         (c.position.microSplit > 1 ? " (run in micro-batches of " + std::to_string(c.microBatch()) + ")" : "") + " (" +
         what +
         "): lower train.batch_size, raise train.accumulation_steps, use precision.mode bf16/fp16, turn on "
         "memory.activation_checkpointing" +
         limit + (c.cfg.memory.oom_backoff ? "" : ", or turn on memory.oom_backoff");
}

// A batch of one example with one value per channel (an epoch's last batch
// at a small input size, or a BatchNorm1d): BatchNorm cannot normalise it in
// training. Said with what to change.
void batchOfOne(const RunContext& c, RunEnding& r) {
  const size_t at = r.error.find("Expected more than 1 value per channel when training");
  if (at == std::string::npos) return;
  std::string pytorch = r.error.substr(at, r.error.find('\n', at) - at);
  if (pytorch.find("{size}") != std::string::npos) pytorch = pytorch.substr(0, pytorch.find(", got input size"));
  r.error = "a training batch gave the model's BatchNorm a single value per channel (" + pytorch +
            "): an epoch's last batch of one example does that at a small input size or in a BatchNorm1d; choose a "
            "train.batch_size that leaves the last batch more than one example (the run has " +
            std::to_string(c.data.splits.train ? c.data.splits.train->size() : 0) +
            " training examples), or a larger data.image_size; the run's last checkpoint is kept";
  r.badInput = true;
}

}  // namespace

RunEnding describeFailure(const RunContext& c) {
  RunEnding r{RunStatus::failed};
  try {
    throw;
  } catch (const LoadCancelled&) {
    log::info("stopped while loading the data, before any training step");
    return {RunStatus::stopped};
  } catch (const c10::OutOfMemoryError& e) {
    r.error = outOfMemory(c, e, r.badInput);
  } catch (const RankLost& e) {
    r.error = std::string(e.what()) + "; the run's last checkpoint is kept: resume it with torchrun --nproc-per-node " +
              std::to_string(c.world()) + " --no-python training-studio-cli resume " + c.runDir;
  } catch (const InputError& e) {
    r.error = e.what();
    r.badInput = true;
  } catch (const std::invalid_argument& e) {
    r.error = e.what();
    r.badInput = true;
  } catch (const c10::Error& e) {
    r.error = e.what_without_backtrace();
  } catch (const std::exception& e) {
    r.error = e.what();  // a TorchScript model's errors come as its interpreter's
  }
  batchOfOne(c, r);
  return r;
}

}  // namespace studio
