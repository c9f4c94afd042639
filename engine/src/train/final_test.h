#pragma once
// The test split's figures at the end of a run (the headline): the last
// weights', or, for a run with a validation split whose best checkpoint was
// saved at another step, the best checkpoint's (Keras's
// restore_best_weights, Lightning's test(ckpt_path="best")), with the last
// weights' figures beside them; then the callbacks' (the weight average).
// RunSummary::testWeights names the weights; export and predict use them by
// default (--which auto).
// Thread: engine thread.

namespace studio {

struct RunContext;
struct RunSummary;

void finalTest(RunContext& c, RunSummary& summary);

}  // namespace studio
