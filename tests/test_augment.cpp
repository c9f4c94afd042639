// The photo augmentations (data/augment.h) against torchvision, the real
// thing: each operation with fixed parameters equals
// torchvision.transforms.v2.functional's on the same float image (oracle:
// tests/reference/make_references.py, augment.json, with the installed
// torchvision 0.26), within 1e-5 (float32 arithmetic in another order;
// a rotation's nearest pixels exactly). The random ones: the same generator
// seed gives the same batch, the draws stay within torchvision's ranges, and
// a crop's or erased box's size follows its settings. RandAugment's and
// TrivialAugmentWide's operations equal torchvision's dispatcher's at their
// magnitudes, and their tables equal torchvision's, bin by bin.
#include "test_support.h"
#include "torch_test_support.h"

#include <ATen/CPUGeneratorImpl.h>
#include <nlohmann/json.hpp>

#include "data/augment.h"
#include "data/auto_augment.h"
#include "data/batch_loader.h"
#include "studio/train_config.h"

using namespace studio;
using studio::test::tensorOf;

class TestAugment : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void equalsTorchvision_data() {
    QTest::addColumn<int>("index");
    const auto ref = test::loadReference("augment");
    for (size_t i = 0; i < ref["cases"].size(); ++i)
      QTest::newRow(ref["cases"][i]["name"].get<std::string>().c_str()) << static_cast<int>(i);
  }
  void equalsTorchvision() {
    QFETCH(int, index);
    const auto ref = test::loadReference("augment");
    const auto& c = ref["cases"][static_cast<size_t>(index)];
    const auto& image = ref["images"][c["image"].get<std::string>()];
    const torch::Tensor img = tensorOf(image["data"], image["shape"].get<std::vector<int64_t>>());
    const std::vector<double> p = c["params"].get<std::vector<double>>();
    const std::string op = c["op"];
    torch::Tensor got;
    if (op == "resized_crop")
      got = resizedCrop(img, int64_t(p[0]), int64_t(p[1]), int64_t(p[2]), int64_t(p[3]), int64_t(p[4]), int64_t(p[5]));
    else if (op == "rotate")
      got = rotateNearest(img, p[0]);
    else if (op == "brightness")
      got = adjustBrightness(img, p[0]);
    else if (op == "contrast")
      got = adjustContrast(img, p[0]);
    else if (op == "saturation")
      got = adjustSaturation(img, p[0]);
    else if (op == "hue")
      got = adjustHue(img, p[0]);
    else if (op == "auto")
      got = applyAutoAugmentOp(img, static_cast<int>(p[0]), p[1]);
    const torch::Tensor want = tensorOf(c["out"], c["shape"].get<std::vector<int64_t>>());
    QCOMPARE(got.sizes().vec(), want.sizes().vec());
    const double diff = (got - want).abs().max().item<double>();
    QVERIFY2(diff <= 1e-5, qPrintable(QString("largest difference %1").arg(diff)));
  }

  // MixUp and CutMix with torchvision's draws (read back from its outputs)
  // give torchvision's batch and targets.
  void mixupAndCutmixEqualTorchvision() {
    const auto ref = test::loadReference("augment");
    const torch::Tensor batch = tensorOf(ref["batch"], {4, 3, 10, 12});
    const torch::Tensor labels = torch::tensor(ref["labels"].get<std::vector<int64_t>>());
    for (const auto& m : ref["mixes"]) {
      std::pair<torch::Tensor, torch::Tensor> got;
      if (m["kind"] == "mixup") {
        got = mixupWith(batch, labels, m["lam"].get<double>(), 3);
      } else {
        const auto box = m["box"].get<std::vector<int64_t>>();
        got = cutmixWith(batch, labels, box[0], box[1], box[2], box[3], 3);
      }
      const torch::Tensor out = tensorOf(m["out"], {4, 3, 10, 12}), targets = tensorOf(m["targets"], {4, 3});
      QVERIFY2(torch::allclose(got.first, out, 1e-6, 1e-6),
               qPrintable(QString::fromStdString(m["kind"].get<std::string>())));
      QVERIFY2(torch::allclose(got.second, targets, 1e-6, 1e-6),
               qPrintable(QString::fromStdString(m["kind"].get<std::string>())));
    }
    // Drawn here: the targets are distributions, and the same seed the same batch.
    BatchMix mix;
    mix.mixup = mix.cutmix = true;
    mix.classes = 3;
    for (uint64_t seed : {1, 2, 3, 4}) {
      at::Generator a = at::make_generator<at::CPUGeneratorImpl>(seed),
                    b = at::make_generator<at::CPUGeneratorImpl>(seed);
      auto one = mixBatch(batch, labels, mix, a), two = mixBatch(batch, labels, mix, b);
      QVERIFY(torch::equal(one.first, two.first) && torch::equal(one.second, two.second));
      QVERIFY(torch::allclose(one.second.sum(1), torch::ones({4}), 1e-6, 1e-6));
    }
  }

  // The batched colour operations with one factor per image equal the
  // single-image ones image by image.
  void perImageFactorsEqualOneAtATime() {
    torch::manual_seed(3);
    const torch::Tensor x = torch::rand({4, 3, 9, 7});
    const torch::Tensor f = torch::tensor({0.5f, 1.0f, 1.25f, 0.0f});
    const torch::Tensor h = torch::tensor({-0.3f, 0.0f, 0.1f, 0.45f});
    const torch::Tensor b = adjustContrast(x, f), s = adjustSaturation(x, f), hue = adjustHue(x, h);
    for (int64_t k = 0; k < 4; ++k) {
      QVERIFY(torch::allclose(b[k], adjustContrast(x[k], f[k].item<double>()), 1e-6, 1e-6));
      QVERIFY(torch::allclose(s[k], adjustSaturation(x[k], f[k].item<double>()), 1e-6, 1e-6));
      QVERIFY(torch::allclose(hue[k], adjustHue(x[k], h[k].item<double>()), 1e-5, 1e-5));
    }
  }

  // RandAugment's and TrivialAugmentWide's tables: the operations in
  // torchvision's order, which are signed, and every bin's magnitude.
  void policyTablesEqualTorchvision() {
    const auto ref = test::loadReference("augment");
    QCOMPARE(autoAugmentOps(), ref["policy_ops"].get<std::vector<std::string>>());
    const auto& image = ref["images"]["rgb"];
    const int64_t h = image["shape"][1], w = image["shape"][2];
    for (const AugmentPolicy policy : {AugmentPolicy::randaugment, AugmentPolicy::trivialaugment}) {
      const auto& table = ref["policies"][nameOf(policy)];
      for (int op = 0; op < static_cast<int>(autoAugmentOps().size()); ++op) {
        const auto& entry = table[autoAugmentOps()[static_cast<size_t>(op)]];
        QCOMPARE(autoAugmentSigned(op), entry["signed"].get<bool>());
        if (entry["magnitudes"].is_null()) {
          QCOMPARE(autoAugmentMagnitude(policy, op, 5, 31, h, w), 0.0);
          continue;
        }
        const auto want = entry["magnitudes"].get<std::vector<double>>();
        QCOMPARE(want.size(), size_t(31));
        for (int bin = 0; bin < 31; ++bin)
          QVERIFY2(autoAugmentMagnitude(policy, op, bin, 31, h, w) == want[static_cast<size_t>(bin)],
                   qPrintable(QString("%1 %2 bin %3: %4, torchvision %5")
                                  .arg(nameOf(policy).c_str())
                                  .arg(autoAugmentOps()[static_cast<size_t>(op)].c_str())
                                  .arg(bin)
                                  .arg(autoAugmentMagnitude(policy, op, bin, 31, h, w))
                                  .arg(want[static_cast<size_t>(bin)])));
      }
    }
  }

  // A policy's batch: seeded, in [0, 1], each image on its own draws;
  // RandAugment with no operations leaves the batch as it was.
  void policiesAreSeededPerImage() {
    torch::manual_seed(3);
    const torch::Tensor x = torch::rand({8, 3, 16, 12});
    for (const AugmentPolicy policy : {AugmentPolicy::randaugment, AugmentPolicy::trivialaugment}) {
      AutoAugment a;
      a.policy = policy;
      auto draw = [&](uint64_t seed) {
        at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
        return autoAugmentBatch(x.clone(), a, gen);
      };
      const torch::Tensor one = draw(11), again = draw(11), other = draw(12);
      QVERIFY(torch::equal(one, again));
      QVERIFY(!torch::equal(one, other));
      QVERIFY(one.min().item<double>() >= 0.0 && one.max().item<double>() <= 1.0);
      int changed = 0;
      for (int64_t k = 0; k < x.size(0); ++k) changed += torch::equal(one[k], x[k]) ? 0 : 1;
      QVERIFY2(changed >= 4,
               qPrintable(QString("%1: %2 of 8 images changed").arg(nameOf(policy).c_str()).arg(changed)));
    }
    AutoAugment none;
    none.policy = AugmentPolicy::randaugment;
    none.numOps = 0;
    at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(1);
    QVERIFY(torch::equal(autoAugmentBatch(x.clone(), none, gen), x));
    // A magnitude past the bins is refused by name.
    TrainConfig c;
    c.data.format = DataFormat::image_folder;
    c.data.root = "/tmp";
    c.data.augment_policy = AugmentPolicy::randaugment;
    c.data.augment_policy_magnitude = 31;
    bool named = false;
    for (const auto& e : validate(c)) named = named || e.field == "data.augment_policy_magnitude";
    QVERIFY(named);
  }

  void theSameSeedGivesTheSameBatch() {
    PhotoAugment a;
    a.resizedCrop = true;
    a.verticalFlip = true;
    a.rotation = 20;
    a.brightness = a.contrast = a.saturation = 0.4;
    a.hue = 0.1;
    a.erasing = 0.5;
    torch::manual_seed(1);
    const torch::Tensor x = torch::rand({6, 3, 16, 12});
    auto draw = [&](uint64_t seed) {
      at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
      return eraseRandomly(augmentPhotos(x.clone(), a, gen), a, gen);
    };
    const torch::Tensor one = draw(7), again = draw(7), other = draw(8);
    QVERIFY(torch::equal(one, again));
    QVERIFY(!torch::equal(one, other));
    QCOMPARE(one.sizes().vec(), x.sizes().vec());
    QVERIFY(one.min().item<double>() >= 0.0 && one.max().item<double>() <= 1.0);
  }

  // RandomResizedCrop with scale and ratio fixed at 1: the whole image, unchanged;
  // with scale 0.25 and ratio 1 on a 16x16 image: an 8x8 crop, every pixel of the
  // output from inside the image (no padding).
  void resizedCropFollowsItsSettings() {
    PhotoAugment a;
    a.resizedCrop = true;
    a.scaleMin = a.scaleMax = 1.0;
    a.ratioMin = a.ratioMax = 1.0;
    const torch::Tensor x = torch::rand({5, 3, 16, 16});
    at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(1);
    QVERIFY(torch::equal(augmentPhotos(x, a, gen), x));
    // Constant images of distinct values: a crop of one keeps its value.
    a.scaleMin = a.scaleMax = 0.25;
    const torch::Tensor flat = torch::arange(5, torch::kFloat32).div(5).view({5, 1, 1, 1}).expand({5, 3, 16, 16});
    const torch::Tensor out = augmentPhotos(flat.contiguous(), a, gen);
    QVERIFY(torch::allclose(out, flat, 1e-6, 1e-6));
  }

  void erasingFollowsItsProbability() {
    PhotoAugment a;
    a.erasing = 1.0;
    const torch::Tensor x = torch::ones({50, 3, 20, 20});
    at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(4);
    const torch::Tensor out = eraseRandomly(x, a, gen);
    const torch::Tensor erased = (out == 0).to(torch::kFloat32).mean({1, 2, 3});  // share of each image
    QVERIFY(erased.min().item<double>() > 0.0);                                   // every image
    QVERIFY(erased.max().item<double>() <= 0.33 + 0.02);                          // scale 0.02-0.33 (rounded sides)
    a.erasing = 0.0;
    QVERIFY(torch::equal(eraseRandomly(x, a, gen), x));
  }

  void settingsAreChecked() {
    TrainConfig c;
    c.data.format = DataFormat::image_folder;
    c.data.root = "/tmp/photos";
    c.data.augment_resized_crop = true;
    c.data.augment_crop_scale_min = 0.9;
    c.data.augment_crop_scale_max = 0.5;
    bool named = false;
    for (const auto& e : validate(c)) named = named || e.field == "data.augment_crop_scale_min";
    QVERIFY(named);
    c.data.augment_crop_scale_min = 0.08;
    c.data.augment_crop_scale_max = 1.5;  // torchvision's scale is a share of the area: at most 1
    QString said;
    for (const auto& e : validate(c))
      if (e.field == "data.augment_crop_scale_max") said = QString::fromStdString(e.text());
    QVERIFY2(said.contains("1.5"), qPrintable(said));
    // MixUp's alpha must be above 0, and the mixes need one class per example.
    c.data.augment_crop_scale_max = 1.0;
    c.data.augment_mixup = true;
    c.data.mixup_alpha = 0;
    c.loss.kind = LossKind::focal;
    bool alpha = false, focal = false;
    for (const auto& e : validate(c)) {
      alpha = alpha || e.field == "data.mixup_alpha";
      focal = focal || (e.field == "loss.kind" && e.message.find("MixUp") != std::string::npos);
    }
    QVERIFY(alpha);
    QVERIFY(focal);
  }
};

QTEST_GUILESS_MAIN(TestAugment)
#include "test_augment.moc"
