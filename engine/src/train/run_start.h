#pragma once
// How a run begins, as one typed value: fresh, from its own last checkpoint
// (resume; continue, which first adds more steps), from another run's
// checkpoint (fork), or as a probe that does not train (lr-find,
// batch-find).
// Thread: made on the front-end's thread, read on the engine thread.

#include <cstdint>
#include <string>
#include <variant>

#include <nlohmann/json.hpp>

#include "studio/session.h"
#include "studio/train_config.h"

namespace studio {

namespace run_start {
struct Fresh {};
struct Resume {  // runDir's checkpoints/last.ckpt
  // None yet (killed before its first): the run again from step 0 in its
  // folder, its rows past the start replaced as it makes them again.
  bool fromStart = false;
};
// training-studio-cli continue: a resume that first adds more epochs.
struct Continue {
  int64_t epochs = 0;  // more epochs
  Choice<ContinueSchedule> how = ContinueSchedule::restart;
  ScheduleConfig schedule;  // restart: the schedule started again
  double lr = 0;            // 0: restart, optimizer.lr; constant, the last learning rate
  bool fromHere = false;    // from the checkpoint's step (an early-stopped run), not the plan's end
};
struct Fork {
  std::string checkpoint;  // the parent's checkpoint file
  nlohmann::json parent;   // run_info.parent
};
struct LrFind {
  LrFindOptions options;  // a learning-rate range test instead of training
};
struct BatchFind {
  BatchFindOptions options;  // the largest micro-batch instead of training
};
}  // namespace run_start

// A struct around the variant: studio/session.h forward-declares it.
struct RunStart {
  using How = std::variant<run_start::Fresh, run_start::Resume, run_start::Continue, run_start::Fork, run_start::LrFind,
                           run_start::BatchFind>;
  How how;
  RunStart() = default;
  template <class Kind>
  RunStart(Kind kind) : how(std::move(kind)) {}  // NOLINT(google-explicit-constructor): a RunStart is its kind
  template <class Kind>
  const Kind* as() const {
    return std::get_if<Kind>(&how);
  }
  template <class Kind>
  bool is() const {
    return std::holds_alternative<Kind>(how);
  }
};

// Resume and continue start from the run's own checkpoint.
inline bool resumes(const RunStart& s) { return s.is<run_start::Resume>() || s.is<run_start::Continue>(); }
// lr-find and batch-find measure; they train no run.
inline bool probes(const RunStart& s) { return s.is<run_start::LrFind>() || s.is<run_start::BatchFind>(); }
// run_info.probe: "lr-find" or "batch-find" for a probe, "" for a training run.
inline const char* probeKind(const RunStart& s) {
  return s.is<run_start::LrFind>() ? "lr-find" : s.is<run_start::BatchFind>() ? "batch-find" : "";
}

}  // namespace studio
