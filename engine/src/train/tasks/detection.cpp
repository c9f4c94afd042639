// Object detection (task.kind detection, issue 43): the detector's loss is
// torchvision's sum of its parts, computed in its forward pass from the
// boxes (detection/detection_data.h unpacks them from the batch's targets),
// after the box-aware augmentations; an evaluation is COCO's figures
// (studio/coco_eval.h) of its detections, in each image's own pixels,
// against the annotations' boxes (crowds ignored as COCO ignores them).
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/Generator.h>

#include <cmath>
#include <stdexcept>

#include "detection/box_augment.h"
#include "detection/detection_data.h"
#include "models/detector_model.h"
#include "studio/coco_eval.h"
#include "train/step/autocast_scope.h"
#include "train/tasks/task.h"

namespace studio {
namespace {

detection::FasterRcnnImpl& detectorOf(Model& model) {
  auto* d = dynamic_cast<DetectorModel*>(&model);
  if (!d) throw std::logic_error("task.kind detection needs a detector model");
  return d->detector();
}

class Detection : public Task {
 public:
  Detection(const TrainConfig& c, const TaskData& data)
      : m_boxes(data.boxes), m_augment(detection::boxAugmentOf(c.data)) {
    if (!m_boxes) throw std::logic_error("task.kind detection needs the data's boxes");
  }
  std::string name() const override { return "detection"; }

  torch::Tensor loss(const torch::Tensor&, const torch::Tensor&) const override {
    throw std::logic_error("a detector's loss comes from its forward pass (modelLoss)");
  }
  bool lossInModel() const override { return true; }
  std::vector<std::string> lossParts() const override {
    return {"loss_classifier", "loss_box_reg", "loss_objectness", "loss_rpn_box_reg"};
  }

  torch::Tensor modelLoss(Model& model, const torch::Tensor& x, const torch::Tensor& y,
                          torch::Tensor& parts) const override {
    detection::FasterRcnnImpl& net = detectorOf(model);
    std::vector<torch::Tensor> images, boxes, labels;
    at::Generator gen = at::detail::getDefaultCPUGenerator();
    for (auto& im : detection::unpackBatch(x, y)) {
      if (m_augment.any()) {
        detection::BoxedImage b = detection::augmentBoxed({im.image, im.boxes, im.labels}, m_augment, gen);
        im.image = b.image;
        im.boxes = b.boxes;
        im.labels = b.labels;
      }
      images.push_back(im.image);
      boxes.push_back(im.boxes);
      labels.push_back(im.labels);
    }
    const detection::DetectionLosses l = net.losses(images, boxes, labels);
    std::vector<torch::Tensor> each;
    torch::Tensor sum;
    for (const auto& [name, value] : l) {
      const torch::Tensor v = value.to(torch::kFloat32);
      each.push_back(v.detach());
      sum = sum.defined() ? sum + v : v;
    }
    parts = torch::stack(each);
    return sum;
  }

  EvalOutcome evaluate(Model& model, const Dataset& set, const LoaderOptions& transform, const EvalOptions& options,
                       const torch::Device& device) const override {
    detection::FasterRcnnImpl& net = detectorOf(model);
    torch::InferenceMode inference;
    model.setTraining(false);
    std::vector<CocoBox> found;
    std::vector<int64_t> items;
    const int64_t n = set.size(), batch = std::max<int64_t>(1, std::min<int64_t>(options.batchSize, 16));
    const int64_t batches = (n + batch - 1) / batch;
    for (int64_t start = 0; start < n; start += batch) {
      if (options.progress) options.progress(start / batch, batches);
      const Examples e = set.slice(start, std::min(n, start + batch));
      const torch::Tensor x = transformBatch(e.x.to(device), transform, 0, false);
      std::vector<detection::PackedImage> packed = detection::unpackBatch(x, e.y);
      std::vector<torch::Tensor> images;
      for (const auto& p : packed) images.push_back(p.image);
      std::vector<detection::Detections> out;
      {
        AutocastScope ac(device.type(), options.autocast, options.autocastDtype);
        out = net.detect(images);
      }
      for (size_t i = 0; i < packed.size(); ++i) {
        items.push_back(packed[i].item);
        // Back to the image's own pixels, as COCO's results format.
        const torch::Tensor b = (out[i].boxes.to(torch::kCPU, torch::kFloat64) / packed[i].scale).contiguous();
        const torch::Tensor s = out[i].scores.to(torch::kCPU, torch::kFloat64).contiguous();
        const torch::Tensor l = out[i].labels.to(torch::kCPU).contiguous();
        auto bb = b.accessor<double, 2>();
        auto ss = s.accessor<double, 1>();
        auto ll = l.accessor<int64_t, 1>();
        for (int64_t k = 0; k < b.size(0); ++k) {
          CocoBox d;
          d.image = packed[i].item;
          d.category = m_boxes->categories[static_cast<size_t>(ll[k] - 1)].id;
          d.box = {bb[k][0], bb[k][1], bb[k][2] - bb[k][0], bb[k][3] - bb[k][1]};
          d.area = d.box[2] * d.box[3];
          d.score = ss[k];
          found.push_back(d);
        }
      }
    }
    if (options.progress) options.progress(batches, batches);
    model.setTraining(true);

    std::vector<char> inSet(m_boxes->images.size(), 0);
    for (int64_t item : items) inSet[static_cast<size_t>(item)] = 1;
    const CocoStats stats = cocoEvaluate(items, cocoGroundTruth(*m_boxes, /*byIndex=*/true, inSet), found);
    EvalOutcome o;
    o.loss = std::numeric_limits<double>::quiet_NaN();  // torchvision's detectors give no loss in evaluation
    o.coco.assign(stats.stats.begin(), stats.stats.end());
    o.map = stats.stats[0];
    std::vector<int64_t> ids;
    for (const auto& c : m_boxes->categories) ids.push_back(c.id);
    CocoPerClass perClass = cocoPerClass(stats, ids);
    o.apPerClass = std::move(perClass.ap);
    o.precision50 = std::move(perClass.precision50);
    return o;
  }

  EvalReport report(const EvalOutcome& o, const ReportInput& in) const override {
    EvalReport r = reportFor(name(), o, in);
    r.coco = o.coco;
    r.apPerClass = o.apPerClass;
    r.precision50 = o.precision50;
    r.map = o.map;
    r.classes = in.data.classNames;
    return r;
  }

 private:
  std::shared_ptr<const BoxAnnotations> m_boxes;
  detection::BoxAugment m_augment;
};

}  // namespace

std::unique_ptr<Task> makeDetection(const TrainConfig& config, const TaskData& data) {
  return std::make_unique<Detection>(config, data);
}

}  // namespace studio
