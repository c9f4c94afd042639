// The settings form: an editor for every field, a lossless round trip with
// TrainConfig, the engine's own messages inline with Start disabled, undo and
// redo, presets and files, and the schedule preview the settings produce.
#include <QApplication>
#include <QGroupBox>
#include <QScrollArea>
#include <QScrollBar>
#include <QWheelEvent>
#include <QtTest/QtTest>

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QLineEdit>
#include <QMenu>
#include <QToolButton>
#include <QUndoStack>

#include <fstream>

#include <nlohmann/json.hpp>

#include "studio/dataset_info.h"
#include "studio/devices.h"
#include "studio/lr_schedule.h"
#include "studio/session.h"
#include "test_support.h"
#include "ui/charts/metric_chart.h"
#include "ui/charts/plots_panel.h"
#include "ui/settings/settings_panel.h"
#include "ui/window/main_window.h"
#include "ui/window/run_toolbar.h"

using namespace studio;
using studio::ui::SettingsPanel;

namespace {

void leaves(const nlohmann::json& j, const std::string& prefix, std::vector<std::string>& out) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string path = prefix.empty() ? it.key() : prefix + "." + it.key();
    if (it->is_object())
      leaves(*it, path, out);
    else
      out.push_back(path);
  }
}

// Settings where every field differs from its default.
TrainConfig unusual() {
  TrainConfig c;
  c.name = "unusual";
  c.task = {TaskKind::classification, 0.7, false};  // regression and multilabel need a table; this is an image folder
  c.loss = {LossKind::cross_entropy, 2.5, 1.5, "balanced", 0.1, "none"};
  c.model = {"resnet",        24, 3, 0.25, "/tmp/model.ts", "/tmp/weights.pth", true, {200, 400, 0.25, 0.625, 50, 256},
             {300, 250, true}};
  c.data = {.format = DataFormat::image_folder,
            .dataset = IdxDataset::mnist,
            .root = "/tmp/somewhere",
            .train_file = "/tmp/train.csv",
            .test_file = "/tmp/test.csv",
            .label_column = "species",
            .ignore_columns = {"id", "note"},
            .target_columns = {"price", "yield"},
            .tag_separator = ";",
            .targets_file = "/tmp/targets.csv",
            .image_size = {48, 64},
            .stored_size = 72,
            .channels = 3,
            .test_fraction = 0.25,
            .on_bad_file = OnBadFile::skip,
            .train_limit = 1234,
            .test_limit = 567,
            .val_fraction = 0.125,
            .cv_folds = 4,
            .cv_fold = 2,
            .corrections = "/tmp/corrections.csv",
            .annotations = "/tmp/boxes.json",
            .annotation_format = AnnotationFormat::voc,
            .on_bad_box = OnBadBox::clip,
            .test_annotations = "/tmp/test-boxes.json",
            .test_root = "/tmp/test-images",
            .ignore_index = 100,
            .class_names = {"sky", "road"},
            .normalize = false,
            .normalize_stats = NormalizeStats::imagenet,
            .sampler = SamplerKind::balanced,
            .augment_flip = true,
            .augment_photometric = true,
            .augment_zoom_out = true,
            .augment_iou_crop = true,
            .augment_crop = 3,
            .augment_resized_crop = true,
            .augment_crop_scale_min = 0.25,
            .augment_crop_scale_max = 0.75,
            .augment_crop_ratio_min = 0.5,
            .augment_crop_ratio_max = 2.0,
            .augment_vflip = true,
            .augment_rotation = 15,
            .augment_brightness = 0.25,
            .augment_contrast = 0.125,
            .augment_saturation = 0.375,
            .augment_hue = 0.0625,
            .augment_erasing = 0.5,
            .augment_policy = AugmentPolicy::randaugment,
            .augment_policy_ops = 3,
            .augment_policy_magnitude = 12,
            .augment_policy_bins = 25,
            .augment_mixup = true,
            .mixup_alpha = 0.4,
            .augment_cutmix = true,
            .cutmix_alpha = 0.8,
            .mix_switch_prob = 0.25};
  c.train = {7,
             999,
             96,
             3,
             1.5,
             424242,
             5,
             OnNonfinite::rollback,
             0.25,
             4,
             {"eval_accuracy", BetterIs::max, 7, 0.01},
             {0.995, 3, 11},
             {2, false, 0.05, true, "fc."}};
  c.optimizer = {OptimizerKind::adamw, 0.003, 0.01, 0.8, true, 0.85, 0.995, 1e-7};
  c.schedule.kind = ScheduleKind::cyclic;
  c.schedule.warmup_steps = 0;
  c.schedule.warmup_start_factor = 0.2;
  c.schedule.step = {333, 0.5};
  c.schedule.cosine = {444, 1e-5};
  c.schedule.linear = {0.25, 0.75, 12};
  c.schedule.onecycle = {0.2, 100, 0.4, OneCycleAnneal::linear, 10, 1000, true, false, 0.8, 0.97};
  c.schedule.cyclic = {0.0005, 0.05, 150, 90, CyclicMode::exp_range, 0.999, false, 0.7, 0.95};
  c.precision.mode = PrecisionMode::fp16;
  c.precision.loss_scale = {1024, 4, 0.25, 100};
  c.performance = {"cpu", false, false, true, false, CudaGraphs::off, 3};
  c.loader = {LoaderMode::workers, 3, 6, false};
  c.evaluation = {250, 512};
  c.output = {"/tmp/runs-elsewhere", 50, false, true};
  return c;
}

void typeInto(QLineEdit* edit, const QString& text) {
  edit->setFocus();
  edit->selectAll();
  QTest::keyClick(edit, Qt::Key_Delete);
  QTest::keyClicks(edit, text);
}

QString presetDir() { return QString::fromStdString(defaultPresetDir()); }

}  // namespace

class TestSettingsPanel : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void everyFieldHasAnEditorWithATooltip() {
    SettingsPanel panel;
    std::vector<std::string> paths;
    leaves(toJson(TrainConfig{}), "", paths);
    QVERIFY(paths.size() > 70);
    for (const std::string& p : paths) {
      if (p == "schema_version") continue;  // written by the engine, not a setting
      QWidget* editor = panel.editor(QString::fromStdString(p));
      QVERIFY2(editor, p.c_str());
      QVERIFY2(!editor->toolTip().isEmpty(), p.c_str());
    }
    QCOMPARE(settingsSchema().size(), paths.size() - 1);
  }

  // Issue 9, item 5: the wheel over a list the person is scrolling past
  // scrolls the form and leaves the list's value alone; a focused list
  // still takes the wheel.
  void wheelOverAnUnfocusedListScrollsTheForm() {
    SettingsPanel panel;
    panel.resize(420, 300);  // the form scrolls
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    auto* combo = qobject_cast<QComboBox*>(panel.editor("loader.mode"));
    QVERIFY(combo);
    const QString before = combo->currentText();
    auto* scroll = panel.findChild<QScrollArea*>();
    QVERIFY(scroll && scroll->verticalScrollBar()->maximum() > 0);
    scroll->ensureWidgetVisible(combo);
    const int scrolled = scroll->verticalScrollBar()->value();
    auto wheel = [&](int delta) {
      const QPointF at(combo->width() / 2.0, combo->height() / 2.0);
      QWheelEvent e(at, combo->mapToGlobal(at), QPoint(), QPoint(0, delta), Qt::NoButton, Qt::NoModifier,
                    Qt::NoScrollPhase, false);
      QApplication::sendEvent(combo, &e);
    };
    wheel(-120);
    QCOMPARE(combo->currentText(), before);
    QCOMPARE(QString::fromStdString(panel.config().loader.mode.name()), before);
    QVERIFY(scroll->verticalScrollBar()->value() > scrolled);  // the form moved instead
    combo->setFocus();
    QTRY_VERIFY(combo->hasFocus());
    wheel(-120);
    QVERIFY(combo->currentText() != before);
  }

  // Issue 9, item 8: the group's title shows its "&" (a single one is read as
  // a shortcut mark, "Precision _memory").
  void groupTitlesShowTheirAmpersand() {
    SettingsPanel panel;
    bool found = false;
    for (auto* box : panel.findChildren<QGroupBox*>())
      if (box->title() == "Precision && memory") found = true;
    QVERIFY(found);
  }

  void formRoundTripsTrainConfig() {
    const TrainConfig original = unusual();
    QVERIFY2(validate(original).empty(), validate(original).empty() ? "" : validate(original)[0].text().c_str());
    SettingsPanel panel;
    panel.setConfig(original);
    QVERIFY(panel.isValid());
    QCOMPARE(toJson(panel.config()).dump(), toJson(original).dump());
    // Through the widgets' text alone: a second form fed every editor's text.
    SettingsPanel copy;
    for (const auto& spec : settingsSchema()) {
      const QString path = QString::fromStdString(spec.path);
      QWidget* w = panel.editor(path);
      QString text;
      if (auto* e = qobject_cast<QLineEdit*>(w)) text = e->text();
      if (auto* c = qobject_cast<QCheckBox*>(w)) text = c->isChecked() ? "true" : "false";
      if (auto* c = qobject_cast<QComboBox*>(w)) text = c->currentText();
      copy.applyFieldText(path, text);
    }
    QCOMPARE(toJson(copy.config()).dump(), toJson(original).dump());
  }

  // torchvision's crop ratios 3/4 and 4/3 read as fractions (the field showed
  // 1.3333333333333333), and the text gives back the same double exactly.
  void fractionsShowAsFractions() {
    TrainConfig c;
    c.data.format = DataFormat::image_folder;
    c.data.augment_resized_crop = true;
    c.data.augment_crop_ratio_min = 3.0 / 4.0;
    c.data.augment_crop_ratio_max = 4.0 / 3.0;
    c.optimizer.lr = 0.1;
    SettingsPanel panel;
    panel.setConfig(c);
    auto* widest = qobject_cast<QLineEdit*>(panel.editor("data.augment_crop_ratio_max"));
    QVERIFY(widest);
    QCOMPARE(widest->text(), QString("4/3"));
    QCOMPARE(qobject_cast<QLineEdit*>(panel.editor("data.augment_crop_ratio_min"))->text(), QString("0.75"));
    QCOMPARE(qobject_cast<QLineEdit*>(panel.editor("optimizer.lr"))->text(), QString("0.1"));
    panel.applyFieldText("data.augment_crop_ratio_max", "5/3");
    QCOMPARE(panel.config().data.augment_crop_ratio_max, 5.0 / 3.0);
    panel.applyFieldText("data.augment_crop_ratio_max", "4/3");
    QCOMPARE(panel.config().data.augment_crop_ratio_max, 4.0 / 3.0);
    panel.applyFieldText("data.augment_crop_ratio_max", "4/0");
    QVERIFY(!panel.isValid());
  }

  void invalidValueShowsEngineMessageAndDisablesStart() {
    ui::MainWindow window(presetDir(), false);
    window.show();
    SettingsPanel* panel = window.settingsPanel();
    QAction* start = window.runToolBar()->startAction();
    QVERIFY(panel->isValid());
    QVERIFY(start->isEnabled());

    auto* lr = qobject_cast<QLineEdit*>(panel->editor("optimizer.lr"));
    typeInto(lr, "-1");
    // The message validate() gives, under the field.
    std::vector<ConfigError> expected;
    TrainConfig c = panel->config();
    c.optimizer.lr = -1;
    for (const auto& e : validate(c))
      if (e.field == "optimizer.lr") expected.push_back(e);
    QCOMPARE(expected.size(), size_t{1});
    QCOMPARE(panel->errorFor("optimizer.lr"), QString::fromStdString(expected[0].message));
    QCOMPARE(panel->errorFor("optimizer.lr"), QString("must be > 0 (got -1)"));
    QVERIFY(!start->isEnabled());
    QVERIFY(!window.startRun());
    QVERIFY(window.lastMessage().contains("optimizer.lr must be > 0 (got -1)"));

    // Not a number at all, in another field: both listed.
    auto* batch = qobject_cast<QLineEdit*>(panel->editor("train.batch_size"));
    typeInto(batch, "12x");
    QCOMPARE(panel->errorFor("train.batch_size"), QString("must be a whole number (got \"12x\")"));
    QCOMPARE(panel->errorTexts().size(), 2);

    typeInto(lr, "0.05");
    QVERIFY(!start->isEnabled());
    typeInto(batch, "64");
    QVERIFY(panel->errorFor("optimizer.lr").isEmpty());
    QVERIFY(panel->isValid());
    QVERIFY(start->isEnabled());
    QCOMPARE(panel->config().train.batch_size, 64);
  }

  // Issue 40, item 10: typing in a field moves no row of another field: the
  // row it makes appear (Keep the classifier, once model.weights is typed;
  // the fine-tune rows, once freeze_epochs is) waits until its editing ends.
  // The field's own error line shows at once.
  void rowsSettleWhenTheTypingEnds() {
    ui::MainWindow window(presetDir(), false);
    window.show();
    SettingsPanel* panel = window.settingsPanel();
    TrainConfig c = panel->config();
    c.model.kind = "resnet18";
    c.data.channels = 3;
    panel->setConfig(c);
    QWidget* keep = panel->editor("model.keep_head");
    QWidget* gradual = panel->editor("train.finetune.gradual");
    QVERIFY(!keep->isVisibleTo(panel) && !gradual->isVisibleTo(panel));
    auto* weights = qobject_cast<QLineEdit*>(panel->editor("model.weights"));
    typeInto(weights, "/w.pth");
    QCOMPARE(panel->config().model.weights, std::string("/w.pth"));  // the value is taken at once
    QVERIFY(!keep->isVisibleTo(panel));                              // its row waits
    QTest::keyClick(weights, Qt::Key_Return);                        // editing ends
    QVERIFY(keep->isVisibleTo(panel));
    auto* freeze = qobject_cast<QLineEdit*>(panel->editor("train.finetune.freeze_epochs"));
    typeInto(freeze, "2");
    QCOMPARE(panel->config().train.finetune.freeze_epochs, 2);
    QVERIFY(!gradual->isVisibleTo(panel));
    QTest::keyClick(freeze, Qt::Key_Return);
    QVERIFY(gradual->isVisibleTo(panel));
    // The typed field's own error shows while it is typed.
    auto* lr = qobject_cast<QLineEdit*>(panel->editor("optimizer.lr"));
    typeInto(lr, "-1");
    QCOMPARE(panel->errorFor("optimizer.lr"), QString("must be > 0 (got -1)"));
  }

  void crossFieldErrorsLandOnTheirField() {
    SettingsPanel panel;
    panel.applyFieldText("schedule.kind", "onecycle");
    panel.applyFieldText("schedule.warmup_steps", "100");
    // Hidden with onecycle, but shown because it holds an error.
    QVERIFY(panel.errorFor("schedule.warmup_steps").contains("must be 0 with schedule.kind \"onecycle\""));
    QVERIFY(panel.isFieldShown("schedule.warmup_steps"));
    panel.applyFieldText("schedule.warmup_steps", "0");
    QVERIFY(panel.isValid());
    QVERIFY(!panel.isFieldShown("schedule.warmup_steps"));
  }

  // Issue 9, item 12: a GPU that is not on this machine is an error at its
  // field before Start, not a failed run folder after it.
  // Issue 9, item 12: the Device field lists the devices this machine has,
  // with their memory; choosing one sets the field as an edit (undoable).
  void deviceFieldListsThisMachinesDevices() {
    SettingsPanel panel;
    panel.show();
    auto* pick = panel.findChild<QToolButton*>("performance.device.devices");
    QVERIFY(pick && pick->menu());
    const QList<QAction*> actions = pick->menu()->actions();
    QCOMPARE(actions.size(), static_cast<int>(computeDevices().size()) + 1);
    QCOMPARE(actions[0]->data().toString(), QString("auto"));
    QCOMPARE(actions[1]->data().toString(), QString("cpu"));
    QVERIFY2(actions[1]->text().contains(" cores, ") && actions[1]->text().contains("GiB memory"),
             qPrintable(actions[1]->text()));
    for (int i = 2; i < actions.size(); ++i)
      QVERIFY2(actions[i]->data().toString().startsWith("cuda:") && actions[i]->text().contains("GiB"),
               qPrintable(actions[i]->text()));
    panel.applyFieldText("performance.device", "auto");
    const int before = panel.undoStack()->count();
    actions[1]->trigger();
    QCOMPARE(panel.config().performance.device, std::string("cpu"));
    QCOMPARE(panel.undoStack()->count(), before + 1);
    panel.undoStack()->undo();
    QCOMPARE(panel.config().performance.device, std::string("auto"));
  }

  void absentDevicesAreInlineErrors() {
    SettingsPanel panel;
    const int gpus = static_cast<int>(computeDevices().size()) - 1;
    QVERIFY(computeDevices().front().name == "cpu");
    const QString missing = "cuda:" + QString::number(gpus);  // one past the last GPU (cuda:0 on a CPU machine)
    panel.applyFieldText("performance.device", missing);
    QVERIFY(!panel.isValid());
    QVERIFY2(panel.errorFor("performance.device").contains("names " + missing + ", which is not on this machine"),
             qPrintable(panel.errorFor("performance.device")));
    QVERIFY(panel.errorFor("performance.device").contains("it has cpu"));
    panel.applyFieldText("performance.device", "cpu");
    QVERIFY(panel.isValid());
    panel.applyFieldText("distributed.devices", QString("0,%1").arg(std::max(gpus, 1)));
    QVERIFY2(panel.errorFor("distributed.devices").contains("which is not on this machine"),
             qPrintable(panel.errorFor("distributed.devices")));
    panel.applyFieldText("distributed.devices", "cpu,cpu");
    QVERIFY(panel.isValid());
  }

  // Issue 9, item 12: fp16 where the run would train on the CPU is a note
  // at its field before Start (it runs, slowly); it never blocks.
  void fp16OnTheCpuIsAnInlineNote() {
    SettingsPanel panel;
    panel.applyFieldText("performance.device", "cpu");
    panel.applyFieldText("precision.mode", "fp16");
    QVERIFY(panel.isValid());
    QVERIFY2(panel.warningFor("precision.mode").contains("fp16 on the CPU is slow"),
             qPrintable(panel.warningFor("precision.mode")));
    QVERIFY(panel.warningFor("precision.mode").contains("bf16"));
    QCOMPARE(panel.errorFor("precision.mode"), QString());
    panel.applyFieldText("precision.mode", "bf16");
    QCOMPARE(panel.warningFor("precision.mode"), QString());
    panel.applyFieldText("precision.mode", "fp16");
    panel.applyFieldText("performance.device", "auto");
    const bool gpuHere = computeDevices().size() > 1;
    QCOMPARE(panel.warningFor("precision.mode").contains("this machine has no GPU"), !gpuHere);
    // An error at the field comes before the note.
    panel.applyFieldText("precision.loss_scale.init_scale", "-1");
    QVERIFY(!panel.isValid());
    QCOMPARE(panel.warningFor("precision.mode"), QString());
  }

  // Issue 30, item 15: more threads than the machine's cores is a note at
  // the field (the run uses the cores); it never blocks.
  void threadsAboveTheCoresAreAnInlineNote() {
    SettingsPanel panel;
    const int cores = machineCores();
    panel.applyFieldText("performance.threads", QString::number(cores));
    QCOMPARE(panel.warningFor("performance.threads"), QString());
    panel.applyFieldText("performance.threads", "1024");
    QVERIFY(panel.isValid());
    QVERIFY2(panel.warningFor("performance.threads")
                 .contains(QString("1024 is more than this machine's %1 cores").arg(cores)),
             qPrintable(panel.warningFor("performance.threads")));
  }

  void onlyRelevantFieldsAreShown() {
    SettingsPanel panel;
    panel.applyFieldText("optimizer.kind", "sgd");
    QVERIFY(panel.isFieldShown("optimizer.momentum"));
    QVERIFY(!panel.isFieldShown("optimizer.beta1"));
    panel.applyFieldText("optimizer.kind", "adamw");
    QVERIFY(!panel.isFieldShown("optimizer.momentum"));
    QVERIFY(panel.isFieldShown("optimizer.beta2"));
    panel.applyFieldText("schedule.kind", "cyclic");
    QVERIFY(panel.isFieldShown("schedule.cyclic.mode"));
    QVERIFY(!panel.isFieldShown("schedule.onecycle.max_lr"));
    QVERIFY(!panel.isFieldShown("precision.loss_scale.init_scale"));
    panel.applyFieldText("precision.mode", "fp16");
    QVERIFY(panel.isFieldShown("precision.loss_scale.init_scale"));
  }

  void undoAndRedoEveryEdit() {
    SettingsPanel panel;
    panel.show();
    const std::string before = toJson(panel.config()).dump();
    auto* lr = qobject_cast<QLineEdit*>(panel.editor("optimizer.lr"));
    typeInto(lr, "0.125");  // five keystrokes, one undo step
    QCOMPARE(panel.config().optimizer.lr, 0.125);
    auto* nesterov = qobject_cast<QCheckBox*>(panel.editor("optimizer.nesterov"));
    const bool was = nesterov->isChecked();
    QTest::mouseClick(nesterov, Qt::LeftButton, {}, QPoint(5, nesterov->height() / 2));
    QCOMPARE(panel.config().optimizer.nesterov, !was);
    QUndoStack* undo = panel.undoStack();
    QCOMPARE(undo->count(), 2);
    undo->undo();
    QCOMPARE(panel.config().optimizer.nesterov, was);
    QCOMPARE(nesterov->isChecked(), was);
    undo->undo();
    QCOMPARE(lr->text(), QString("0.05"));
    QCOMPARE(toJson(panel.config()).dump(), before);
    undo->redo();
    QCOMPARE(panel.config().optimizer.lr, 0.125);
    QCOMPARE(lr->text(), QString("0.125"));
    // Loading a preset is one undoable step too.
    panel.setPresets(presetDir());
    QVERIFY(panel.loadPreset("fashion-mnist-mlp"));
    QCOMPARE(panel.config().model.kind, std::string("mlp"));
    undo->undo();
    QCOMPARE(panel.config().optimizer.lr, 0.125);
  }

  void presetsAndFiles() {
    SettingsPanel panel;
    panel.setPresets(presetDir());
    QString error;
    QVERIFY(!panel.loadPreset("nope", &error));
    QVERIFY2(error.contains("unknown preset \"nope\""), qPrintable(error));
    QVERIFY(panel.loadPreset("fashion-mnist-cnn", &error));
    QCOMPARE(toJson(panel.config()).dump(),
             toJson(loadConfigFile(presetPath(presetDir().toStdString(), "fashion-mnist-cnn"))).dump());

    QTemporaryDir dir;
    const QString path = dir.filePath("mine.json");
    panel.applyFieldText("train.epochs", "9");
    QVERIFY(panel.saveFile(path, &error));
    SettingsPanel other;
    QVERIFY(other.loadFile(path, &error));
    QCOMPARE(other.config().train.epochs, 9);
    QCOMPARE(toJson(other.config()).dump(), toJson(panel.config()).dump());

    // A file with an unknown key: refused with the key named, nothing changed.
    const QString bad = dir.filePath("bad.json");
    std::ofstream(bad.toStdString()) << R"({"optimizer": {"learning_rate": 0.1}})";
    const std::string kept = toJson(other.config()).dump();
    QVERIFY(!other.loadFile(bad, &error));
    QVERIFY2(error.contains("optimizer.learning_rate"), qPrintable(error));
    QCOMPARE(toJson(other.config()).dump(), kept);
    // Invalid settings are not saved.
    other.applyFieldText("model.width", "0");
    QVERIFY(!other.saveFile(dir.filePath("invalid.json"), &error));
    QVERIFY2(error.contains("model.width"), qPrintable(error));
  }

  void schedulePreviewIsThePlannedCurve() {
    ui::MainWindow window(presetDir(), false);
    SettingsPanel* panel = window.settingsPanel();
    // 1000 images in micro-batches of 100, 3 accumulated: 4 optimizer steps an
    // epoch (the last group short), 12 in 3 epochs.
    panel->applyFieldText("data.train_limit", "1000");
    panel->applyFieldText("train.batch_size", "100");
    panel->applyFieldText("train.accumulation_steps", "3");
    panel->applyFieldText("train.epochs", "3");
    panel->applyFieldText("schedule.kind", "onecycle");
    QVERIFY(panel->isValid());
    ui::MetricChart* chart = window.plotsPanel()->chart(ui::PlotsPanel::LearningRate);
    QTRY_VERIFY(chart->series("preview/lr") && chart->series("preview/lr")->size() == 12);
    const TrainConfig c = panel->config();
    QCOMPARE(countTrainExamples(c), int64_t{1000});
    const LrSchedule schedule(c.schedule, c.optimizer.lr, 12);
    const ui::PlotSeries* preview = chart->series("preview/lr");
    for (size_t i = 0; i < 12; ++i) {
      QCOMPARE(preview->x[i], double(i + 1));
      QCOMPARE(preview->y[i], schedule.lr(static_cast<int64_t>(i)));
    }
    // The curve follows the fields: warm-up then constant.
    panel->applyFieldText("schedule.kind", "constant");
    panel->applyFieldText("schedule.warmup_steps", "4");
    panel->applyFieldText("schedule.warmup_start_factor", "0.25");
    QTRY_COMPARE(chart->series("preview/lr")->y.front(), 0.25 * c.optimizer.lr);
    QCOMPARE(chart->series("preview/lr")->y.back(), c.optimizer.lr);
    // A held-out validation share shortens the plan: 800 images, 8 batches, 3 steps.
    panel->applyFieldText("data.val_fraction", "0.2");
    QTRY_COMPARE(chart->series("preview/lr")->size(), size_t{9});
  }
};

QTEST_MAIN(TestSettingsPanel)
#include "test_settings_panel.moc"
