// The detectors' box operators (engine/src/detection/box_ops.h) equal
// torchvision.ops on the same inputs: NMS and batched NMS keep the same
// boxes in the same order (ties in score, empty boxes, three IoU
// thresholds, both of batched_nms's ways), and RoIAlign's output and its
// input gradient agree (aligned or not, sampling ratio 2 and adaptive,
// spatial scales 1 and 0.25, boxes partly outside and smaller than a pixel).
// Oracle: torchvision, run by tests/reference/make_references.py
// (detection_ops_reference.py).
#include "test_support.h"

#include <torch/csrc/autograd/function.h>

#include "detection/box_ops.h"

using namespace studio;

namespace {

torch::Tensor doubles(const nlohmann::json& values, std::vector<int64_t> shape) {
  std::vector<double> v;
  for (const auto& x : values) v.push_back(x.get<double>());
  return torch::from_blob(v.data(), shape, torch::kFloat64).clone();
}

std::vector<int64_t> longs(const torch::Tensor& t) {
  const torch::Tensor c = t.to(torch::kLong).contiguous();
  return {c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel()};
}

}  // namespace

class TestDetectionOps : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void nmsAsTorchvision() {
    const auto cases = test::loadReference("detection_ops")["nms"];
    QVERIFY(cases.size() >= 12);
    for (const auto& c : cases) {
      const auto n = static_cast<int64_t>(c["scores"].size());
      // torchvision's inputs were float32: the same numbers, the same type.
      const torch::Tensor boxes = doubles(c["boxes"], {n, 4}).to(torch::kFloat);
      const torch::Tensor scores = doubles(c["scores"], {n}).to(torch::kFloat);
      const auto keep = longs(detection::nms(boxes, scores, c["iou"].get<double>()));
      QCOMPARE(keep, c["keep"].get<std::vector<int64_t>>());
    }
  }

  void batchedNmsAsTorchvision() {
    const auto cases = test::loadReference("detection_ops")["batched_nms"];
    bool perCategory = false;
    for (const auto& c : cases) {
      const auto n = static_cast<int64_t>(c["scores"].size());
      perCategory = perCategory || n * 4 > 4000;
      const torch::Tensor boxes = doubles(c["boxes"], {n, 4}).to(torch::kFloat);
      const torch::Tensor scores = doubles(c["scores"], {n}).to(torch::kFloat);
      const torch::Tensor idxs = torch::tensor(c["idxs"].get<std::vector<int64_t>>(), torch::kLong);
      const auto keep = longs(detection::batchedNms(boxes, scores, idxs, c["iou"].get<double>()));
      QCOMPARE(keep, c["keep"].get<std::vector<int64_t>>());
    }
    QVERIFY2(perCategory, "a case above 4,000 numbers takes torchvision's per-category way");
  }

  // Both forms, each forward and backward: torchvision's CPU kernels (the
  // CPU's, roi_align_cpu.h) and the tensor form (the GPU's and bf16's).
  void roiAlignAsTorchvision_data() {
    QTest::addColumn<bool>("kernels");
    QTest::newRow("torchvision's kernels") << true;
    QTest::newRow("tensor form") << false;
  }

  void roiAlignAsTorchvision() {
    QFETCH(bool, kernels);
    const auto cases = test::loadReference("detection_ops")["roi_align"];
    QCOMPARE(cases.size(), size_t{8});
    for (const auto& c : cases) {
      const auto shape = c["input_shape"].get<std::vector<int64_t>>();
      const torch::Tensor input = doubles(c["input"], shape).requires_grad_(true);
      const auto k = static_cast<int64_t>(c["rois"].size() / 5);
      const torch::Tensor rois = doubles(c["rois"], {k, 5});
      const auto out = c["output_size"].get<std::vector<int64_t>>();
      const auto align = kernels ? detection::roiAlign : detection::roiAlignTensors;
      const torch::Tensor y = align(input, rois, {out[0], out[1]}, c["spatial_scale"].get<double>(),
                                    c["sampling_ratio"].get<int64_t>(), c["aligned"].get<bool>());
      const std::string what = "aligned " + std::to_string(c["aligned"].get<bool>()) + ", sampling ratio " +
                               std::to_string(c["sampling_ratio"].get<int64_t>()) + ", scale " +
                               std::to_string(c["spatial_scale"].get<double>());
      QCOMPARE(y.sizes().vec(), (std::vector<int64_t>{k, shape[1], out[0], out[1]}));
      // With a gradient wanted too, the CPU's way is the kernels' (their backward keeps only the
      // rois), not the tensor form's gathered corners: 2.4 GB at a detector's training step.
      QCOMPARE(QString::fromStdString(y.grad_fn()->name()).contains("RoiAlignFunction"), kernels);
      const torch::Tensor want = doubles(c["output"], y.sizes().vec());
      QVERIFY2(torch::allclose(y, want, 1e-12, 1e-12),
               qPrintable(QString::fromStdString(what) +
                          QString(": largest difference %1").arg((y - want).abs().max().item<double>())));
      (y * doubles(c["weight"], y.sizes().vec())).sum().backward();
      const torch::Tensor grad = doubles(c["grad"], shape);
      QVERIFY2(torch::allclose(input.grad(), grad, 1e-12, 1e-12),
               qPrintable(QString::fromStdString(what) +
                          QString(": gradient differs by %1").arg((input.grad() - grad).abs().max().item<double>())));
    }
  }

  // Without a gradient (evaluation, predict) roiAlign takes torchvision's CPU
  // kernel's way (detection/roi_align_cpu.h): the same eight cases, as exact.
  void roiAlignWithoutGradientAsTorchvision() {
    const auto cases =
        test::loadReference("detection_ops")["roi_align"];  // kept: a loop over a temporary's member dangles
    for (const auto& c : cases) {
      const auto shape = c["input_shape"].get<std::vector<int64_t>>();
      const auto k = static_cast<int64_t>(c["rois"].size() / 5);
      const auto out = c["output_size"].get<std::vector<int64_t>>();
      torch::NoGradGuard noGrad;
      const torch::Tensor y = detection::roiAlign(doubles(c["input"], shape), doubles(c["rois"], {k, 5}),
                                                  {out[0], out[1]}, c["spatial_scale"].get<double>(),
                                                  c["sampling_ratio"].get<int64_t>(), c["aligned"].get<bool>());
      const torch::Tensor want = doubles(c["output"], y.sizes().vec());
      QVERIFY2(torch::allclose(y, want, 1e-12, 1e-12),
               qPrintable(QString("sampling ratio %1, aligned %2: largest difference %3")
                              .arg(c["sampling_ratio"].get<int64_t>())
                              .arg(c["aligned"].get<bool>())
                              .arg((y - want).abs().max().item<double>())));
    }
  }

  // float32 as detectors run it: the same values within float's precision.
  void roiAlignInFloat() {
    const auto c = test::loadReference("detection_ops")["roi_align"][0];
    const auto shape = c["input_shape"].get<std::vector<int64_t>>();
    const auto k = static_cast<int64_t>(c["rois"].size() / 5);
    const auto out = c["output_size"].get<std::vector<int64_t>>();
    const torch::Tensor y = detection::roiAlign(
        doubles(c["input"], shape).to(torch::kFloat), doubles(c["rois"], {k, 5}).to(torch::kFloat), {out[0], out[1]},
        c["spatial_scale"].get<double>(), c["sampling_ratio"].get<int64_t>(), c["aligned"].get<bool>());
    QCOMPARE(y.scalar_type(), torch::kFloat);
    QVERIFY(torch::allclose(y.to(torch::kDouble), doubles(c["output"], y.sizes().vec()), 1e-5, 1e-5));
  }

  void emptyInputs() {
    QCOMPARE(detection::nms(torch::zeros({0, 4}), torch::zeros({0}), 0.5).numel(), 0);
    QCOMPARE(
        detection::batchedNms(torch::zeros({0, 4}), torch::zeros({0}), torch::zeros({0}, torch::kLong), 0.5).numel(),
        0);
    QCOMPARE(detection::roiAlign(torch::zeros({1, 2, 4, 4}), torch::zeros({0, 5}), {2, 2}, 1.0, 2, true).sizes().vec(),
             (std::vector<int64_t>{0, 2, 2, 2}));
  }
};

QTEST_GUILESS_MAIN(TestDetectionOps)
#include "test_detection_ops.moc"
