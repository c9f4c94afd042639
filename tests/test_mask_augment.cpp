// A segmentation's geometric augmentations (data/mask_augment.h), image and
// mask together, equal torchvision.transforms.v2.functional's on an Image
// and a Mask (issue 61, item 3): the shorter side resized down and up (the
// image bilinear with antialiasing, the mask nearest), padding on the right
// and bottom with the mask's ignore index (references/segmentation's
// PadIfSmaller), a crop and a horizontal flip, pixel for pixel. The
// preset's random steps keep image and mask together and the same
// generator state gives the same result.
// Oracle: tests/reference/mask_augment_reference.py (torchvision).
#include "test_support.h"
#include "torch_test_support.h"

#include <QTemporaryDir>
#include <map>

#include "data/box_augment.h"
#include "data/mask_augment.h"
#include "tensors/weights_file.h"

using namespace studio;

namespace {

std::map<std::string, torch::Tensor> reference(const QString& dir) {
  const QString path = dir + "/mask_augment.safetensors";
  const test::Ran ran = test::python("mask_augment_reference.py", {path});
  if (ran.code != 0) qFatal("%s", qPrintable(ran.output));
  std::map<std::string, torch::Tensor> out;
  for (const auto& [name, t] : readWeightsFile(path.toStdString())) out[name] = t;
  return out;
}

void same(const MaskedImage& got, const std::map<std::string, torch::Tensor>& want, const std::string& name) {
  const torch::Tensor& image = want.at(name + ".image");
  const torch::Tensor& mask = want.at(name + ".mask");
  QVERIFY2(got.image.sizes() == image.sizes(), name.c_str());
  QVERIFY2(got.mask.sizes() == mask.sizes(), name.c_str());
  QVERIFY2(torch::equal(got.image.contiguous(), image), (name + ": the image differs").c_str());
  QVERIFY2(torch::equal(got.mask.contiguous(), mask), (name + ": the mask differs").c_str());
}

}  // namespace

class TestMaskAugment : public QObject {
  Q_OBJECT
  QTemporaryDir m_dir;
  std::map<std::string, torch::Tensor> m_ref;

 private Q_SLOTS:
  void initTestCase() { m_ref = reference(m_dir.path()); }

  void operationsAreTorchvisions() {
    const MaskedImage in{m_ref.at("input.image"), m_ref.at("input.mask")};
    same(resizeShorterSide(in, 29), m_ref, "resize29");
    same(resizeShorterSide(in, 61), m_ref, "resize61");
    same(padIfSmaller(in, 64, 70, 255), m_ref, "pad");
    same(cropMasked(in, 5, 7, 20, 30), m_ref, "crop");
    same(flipMasked(in), m_ref, "flip");
    // Already large enough: nothing padded.
    QVERIFY(torch::equal(padIfSmaller(in, 30, 40, 255).mask, in.mask));
  }

  void thePresetKeepsImageAndMaskTogether() {
    // An image whose every pixel names its place (modulo 251), and a mask of the same:
    // after the flip, padding and crop, the image's first channel and the mask agree
    // wherever the mask is not padding.
    const int64_t h = 24, w = 40;
    torch::Tensor places = (torch::arange(h * w, torch::kInt64) % 251).to(torch::kUInt8).reshape({h, w});
    const MaskedImage in{places.unsqueeze(0).repeat({3, 1, 1}), places.clone()};
    SegmentationAugment a;
    a.flipProb = 0.5;
    a.cropHeight = 32;
    a.cropWidth = 48;  // larger than the image: padded first
    auto gen = at::make_generator<at::CPUGeneratorImpl>(7);
    for (int k = 0; k < 8; ++k) {
      const MaskedImage out = augmentMasked(in, a, gen);
      QCOMPARE(out.image.sizes(), (std::vector<int64_t>{3, 32, 48}));
      QCOMPARE(out.mask.sizes(), (std::vector<int64_t>{32, 48}));
      const torch::Tensor inside = out.mask != 255;
      QVERIFY(torch::equal(out.image.select(0, 0).masked_select(inside), out.mask.masked_select(inside)));
      // The padding: the mask's ignore index (no place is 255) where the image is 0.
      QVERIFY(torch::all(out.image.select(0, 0).masked_select(~inside) == 0).item<bool>());
    }
    // The same generator state, the same result; resizing draws too.
    a.minSize = 12;
    a.maxSize = 48;
    auto g1 = at::make_generator<at::CPUGeneratorImpl>(3), g2 = at::make_generator<at::CPUGeneratorImpl>(3);
    const MaskedImage x1 = augmentMasked(in, a, g1), x2 = augmentMasked(in, a, g2);
    QVERIFY(torch::equal(x1.image, x2.image) && torch::equal(x1.mask, x2.mask));
  }

  // data.augment_photometric: drawn after the crop, so the same seed gives the same geometry and
  // mask; the image is RandomPhotometricDistort's (detection's, held to torchvision by
  // test_box_augment) of the same crop, on its pixels in [0, 1] and rounded back to 8 bits.
  void photometricChangesTheImageAloneAfterTheCrop() {
    const auto& in = m_ref.at("input.image");
    const MaskedImage x{in, m_ref.at("input.mask")};
    SegmentationAugment plain;
    plain.minSize = 20;
    plain.maxSize = 60;
    plain.cropHeight = 24;
    plain.cropWidth = 30;
    SegmentationAugment distorted = plain;
    distorted.photometric = true;
    int changed = 0;
    for (uint64_t seed = 1; seed <= 12; ++seed) {
      auto g1 = at::make_generator<at::CPUGeneratorImpl>(seed), g2 = at::make_generator<at::CPUGeneratorImpl>(seed);
      const MaskedImage a = augmentMasked(x, plain, g1), b = augmentMasked(x, distorted, g2);
      QVERIFY(torch::equal(a.mask, b.mask));
      QCOMPARE(b.image.scalar_type(), torch::kUInt8);
      // g1 now stands where g2 drew the distortion: the same draws on the plain crop.
      const detection::PhotometricDraw d = detection::drawPhotometric(g1);
      const torch::Tensor want = detection::photometricDistort({a.image.to(torch::kFloat32).div(255.0), {}, {}}, d)
                                     .image.mul(255.0)
                                     .round()
                                     .clamp(0.0, 255.0)
                                     .to(torch::kUInt8);
      QVERIFY(torch::equal(b.image, want));
      changed += torch::equal(a.image, b.image) ? 0 : 1;
    }
    QVERIFY(changed >= 6);  // each of its five steps has p 0.5: most draws change something
  }
};

QTEST_GUILESS_MAIN(TestMaskAugment)
#include "test_mask_augment.moc"
