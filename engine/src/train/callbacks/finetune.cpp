// train.finetune: the head alone for the first epochs, the other layer
// groups frozen (requires_grad off: no gradient, no update, and their
// BatchNorm statistics kept with freeze_batchnorm), then unfrozen at once
// or a group per epoch; each group at its learning-rate factor
// (Optimizer::setLrFactors). Which groups train follows the epoch, so a
// resumed or rolled-back run is in the same state as one never stopped.
// An unfreeze is a record (kind unfreeze) the curves mark.
#include <set>

#include "models/model.h"
#include "optim/optimizer.h"
#include "studio/log.h"
#include "studio/lr_schedule.h"
#include "train/callbacks/train_callback.h"
#include "train/finetune_plan.h"

namespace studio {
namespace {

class Finetune : public TrainCallback {
 public:
  void onTrainStart(CallbackView& ctx) override {
    const FinetuneConfig& c = ctx.cfg().train.finetune;
    m_plan = planFinetune(ctx.model(), ctx.cfg().model, c);
    std::vector<double> factors;
    for (size_t g : m_plan.groupOfParameter) factors.push_back(m_plan.factors[g]);
    ctx.optimizer().setLrFactors(factors);
    nlohmann::json groups = nlohmann::json::array();
    std::string text;
    for (size_t i = 0; i < m_plan.groups.size(); ++i) {
      groups.push_back({{"name", m_plan.groups[i]},
                        {"lr_factor", m_plan.factors[i]},
                        {"trains_from_epoch", m_plan.trainsFromEpoch[i] + 1}});
      char factor[32];
      std::snprintf(factor, sizeof factor, "%.3g", m_plan.factors[i]);
      text += (i ? ", " : "") + m_plan.groups[i] + " x" + factor +
              (m_plan.trainsFromEpoch[i] > 0 ? " from epoch " + std::to_string(m_plan.trainsFromEpoch[i] + 1) : "");
    }
    ctx.finetuneInfo() = {{"groups", groups}, {"freeze_batchnorm", c.freeze_batchnorm}};
    log::info("fine-tuning: " + std::to_string(m_plan.groups.size()) +
              " layer groups, the head last (learning rate "
              "factor, first epoch trained): " +
              text);
    apply(ctx, false);
  }

  bool onStepChecked(CallbackView& ctx) override {
    // Not after the last step: nothing would train the unfrozen layers.
    if (ctx.position().step < ctx.totalSteps()) apply(ctx, true);
    return false;
  }

 private:
  void apply(CallbackView& ctx, bool announce) {
    const int64_t epoch = ctx.position().epoch;
    std::vector<bool> trains;
    for (int64_t from : m_plan.trainsFromEpoch) trains.push_back(epoch >= from);
    if (trains == m_trains) return;
    const auto params = ctx.model().namedParameters();
    std::set<std::string> frozen;
    std::vector<std::string> unfrozen;
    for (size_t g = 0; g < trains.size(); ++g) {
      if (!trains[g])
        frozen.insert(m_plan.groups[g]);
      else if (!m_trains.empty() && !m_trains[g])
        unfrozen.push_back(m_plan.groups[g]);
    }
    for (size_t k = 0; k < params.size(); ++k) {
      torch::Tensor p = params[k].second;
      const bool on = trains[m_plan.groupOfParameter[k]];
      p.requires_grad_(on);
      if (!on && p.grad().defined()) p.mutable_grad().reset();
    }
    if (ctx.cfg().train.finetune.freeze_batchnorm && !frozen.empty())
      ctx.model().freezeNormStatistics([frozen](const std::string& g) { return frozen.count(g) > 0; });
    else
      ctx.model().freezeNormStatistics(nullptr);
    if (announce && !unfrozen.empty()) {
      std::string names;
      for (const auto& g : unfrozen) names += (names.empty() ? "" : ", ") + g;
      MetricRecord r = ctx.record(RecordKind::Unfreeze);
      r.step = ctx.position().step;
      r.lr = ctx.lrAt(ctx.position().step);
      ctx.post(r);
      log::info("epoch " + std::to_string(epoch + 1) + ": unfreezing " + names + " (" +
                std::to_string(trains.size() - frozen.size()) + " of " + std::to_string(trains.size()) +
                " layer groups train from step " + std::to_string(ctx.position().step + 1) + ")");
    } else if (!announce && !frozen.empty()) {
      log::info("frozen until their epoch: " + std::to_string(frozen.size()) + " of " + std::to_string(trains.size()) +
                " layer groups" +
                (ctx.cfg().train.finetune.freeze_batchnorm ? ", their BatchNorm statistics too" : ""));
    }
    m_trains = trains;
  }

  FinetunePlan m_plan;
  std::vector<bool> m_trains;
};

}  // namespace

std::unique_ptr<TrainCallback> makeFinetune(CallbackView& ctx) {
  const FinetuneConfig& c = ctx.cfg().train.finetune;
  if (c.freeze_epochs == 0 && c.backbone_lr_factor == 1.0) return nullptr;
  return std::make_unique<Finetune>();
}

}  // namespace studio
