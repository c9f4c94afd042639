// Every schedule equals PyTorch's Python scheduler step by step
// (StepLR, CosineAnnealingLR, LinearLR, SequentialLR warm-up, OneCycleLR,
// CyclicLR), learning rate and cycled momentum, for several settings.
// Oracle: tests/reference/make_references.py with the installed torch.
#include "test_support.h"

#include "studio/lr_schedule.h"

using namespace studio;

class TestLrSchedule : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void matchesPyTorch_data() {
    QTest::addColumn<int>("index");
    const auto cases = test::loadReference("schedules");
    QVERIFY(cases.size() >= 20);
    for (size_t i = 0; i < cases.size(); ++i)
      QTest::newRow(cases[i]["name"].get<std::string>().c_str()) << static_cast<int>(i);
  }
  void matchesPyTorch() {
    QFETCH(int, index);
    const auto c = test::loadReference("schedules")[static_cast<size_t>(index)];
    nlohmann::json settings = {{"schedule", c["schedule"]}, {"optimizer", {{"lr", c["base_lr"]}}}};
    if (c["optimizer"] == "sgd") settings["optimizer"]["momentum"] = 0.9;
    std::vector<ConfigError> errors;
    TrainConfig cfg = configFromJson(settings, errors);
    QVERIFY2(errors.empty(), errors.empty() ? "" : errors[0].text().c_str());
    const int64_t total = c["total_steps"].get<int64_t>();
    LrSchedule schedule(cfg.schedule, cfg.optimizer.lr, total);
    const bool cycles = (cfg.schedule.kind == ScheduleKind::onecycle && cfg.schedule.onecycle.cycle_momentum) ||
                        (cfg.schedule.kind == ScheduleKind::cyclic && cfg.schedule.cyclic.cycle_momentum);
    for (int64_t step = 0; step < total; ++step) {
      const double want = c["lr"][static_cast<size_t>(step)].get<double>();
      const double got = schedule.lr(step);
      QVERIFY2(test::close(got, want, 1e-9, 1e-12),
               qPrintable(QString("step %1: lr %2, PyTorch %3").arg(step).arg(got, 0, 'g', 17).arg(want, 0, 'g', 17)));
      const double wantMomentum = c["momentum"][static_cast<size_t>(step)].get<double>();
      const auto gotMomentum = schedule.momentum(step);
      QCOMPARE(gotMomentum.has_value(), cycles);
      if (cycles)
        QVERIFY2(test::close(*gotMomentum, wantMomentum, 1e-9, 1e-12),
                 qPrintable(QString("step %1: momentum %2, PyTorch %3").arg(step).arg(*gotMomentum).arg(wantMomentum)));
    }
  }

  void planCountsShortGroups() {
    TrainConfig c;
    c.train.batch_size = 64;
    c.train.accumulation_steps = 4;
    c.train.epochs = 3;
    const StepPlan p = planSteps(c, 1000);  // 16 micro-batches (last of 40), 4 steps an epoch
    QCOMPARE(p.microBatchesPerEpoch, int64_t(16));
    QCOMPARE(p.stepsPerEpoch, int64_t(4));
    QCOMPARE(p.totalSteps, int64_t(12));
    c.train.accumulation_steps = 5;  // groups of 5,5,5,1
    QCOMPARE(planSteps(c, 1000).stepsPerEpoch, int64_t(4));
    c.train.max_steps = 7;
    QCOMPARE(planSteps(c, 1000).totalSteps, int64_t(7));
    // The first of the two ends the run, as train.max_steps's tip says (and
    // Lightning's max_epochs/max_steps): 3 epochs of 4 steps come first.
    c.train.max_steps = 40;
    QCOMPARE(planSteps(c, 1000).totalSteps, int64_t(12));
    c.train.epochs = 0;  // the steps alone
    QCOMPARE(planSteps(c, 1000).totalSteps, int64_t(40));
    // A plan past kMaxPlannedSteps is refused, and the epochs' product does
    // not overflow.
    c.train.max_steps = 0;
    c.train.epochs = 1000000;
    c.train.batch_size = 1;
    c.train.accumulation_steps = 1;
    const StepPlan huge = planSteps(c, int64_t(1) << 45);  // 3.5e19 steps: past int64
    QCOMPARE(huge.totalSteps, std::numeric_limits<int64_t>::max());
    QVERIFY(stepPlanError(c, huge).find("train.epochs 1000000") != std::string::npos);
    QVERIFY(stepPlanError(c, planSteps(c, 1000)).empty());  // 1e9 steps: allowed
  }
};

QTEST_GUILESS_MAIN(TestLrSchedule)
#include "test_lr_schedule.moc"
