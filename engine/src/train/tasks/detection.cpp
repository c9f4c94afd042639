// Object detection (task.kind detection, issue 43): the detector's loss is
// torchvision's sum of its parts, computed in its forward pass from the
// boxes (data/box_data.h unpacks them from the batch's targets),
// after the box-aware augmentations; an evaluation is COCO's figures
// (studio/coco_eval.h) of its detections, in each image's own pixels,
// against the annotations' boxes (crowds ignored as COCO ignores them).
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/Generator.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "data/box_augment.h"
#include "data/box_data.h"
#include "detection/detector_net.h"
#include "models/autocast_scope.h"
#include "models/model.h"
#include "studio/coco_eval.h"
#include "train/tasks/classification_eval.h"
#include "train/tasks/task.h"

namespace studio {
namespace {

class Detection : public Task {
 public:
  Detection(const TrainConfig& c, const TaskData& data)
      : m_boxes(data.boxes),
        m_augment(detection::boxAugmentOf(c.data)),
        m_parts(detection::detectorLossParts(c.model.kind)) {
    if (!m_boxes) throw std::logic_error("task.kind detection needs the data's boxes");
  }
  std::string name() const override { return "detection"; }

  torch::Tensor loss(const torch::Tensor&, const torch::Tensor&) const override {
    throw std::logic_error("a detector's loss comes from its forward pass (modelLoss)");
  }
  bool lossInModel() const override { return true; }
  std::vector<std::string> lossParts() const override { return m_parts; }

  torch::Tensor modelLoss(Model& model, const torch::Tensor& x, const torch::Tensor& y,
                          torch::Tensor& parts) const override {
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
    const detection::DetectionLosses l = model.boxLosses(images, boxes, labels);
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

  // Each rank detects in its share of the set (forEachEvalSlice); the
  // boxes of all ranks are gathered before COCO's figures are computed.
  EvalOutcome evaluate(Model& model, const Dataset& set, const LoaderOptions& transform, const EvalOptions& options,
                       const torch::Device& device) const override {
    EvalOptions o = options;
    o.batchSize = std::max<int64_t>(1, std::min<int64_t>(options.batchSize, 16));
    // A row per detection: item, category id, x, y, width, height, score (in the image's own pixels).
    std::vector<double> rows;
    std::vector<int64_t> items;
    forEachEvalSlice(model, set, transform, o, device,
                     [&](const torch::Tensor& x, const torch::Tensor& y, int64_t, int64_t) {
                       std::vector<detection::PackedImage> packed = detection::unpackBatch(x, y);
                       std::vector<torch::Tensor> images;
                       for (const auto& p : packed) images.push_back(p.image);
                       std::vector<detection::Detections> out;
                       {
                         AutocastScope ac(device.type(), o.autocast, o.autocastDtype);
                         out = model.detectBoxes(images);
                       }
                       for (size_t i = 0; i < packed.size(); ++i) {
                         items.push_back(packed[i].item);
                         addRows(rows, packed[i], out[i]);
                       }
                     });
    torch::Tensor found = torch::tensor(rows, torch::kFloat64).view({-1, kColumns});
    if (options.group) {
      found = gatherUnevenRows(found.to(device), *options.group, "the evaluation's boxes").cpu();
      const torch::Tensor mine = torch::tensor(items, torch::kInt64).view({-1, 1}).to(device);
      const torch::Tensor all = gatherRows(mine, set.size(), *options.group).cpu().view({-1});
      items.assign(all.data_ptr<int64_t>(), all.data_ptr<int64_t>() + all.numel());
    }
    return cocoOutcome(items, found);
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

  // COCOeval's stats: AP@[.50:.95] (map), AP50 and AP75.
  Figures figures(const EvalOutcome& o) const override {
    Figures f = Task::figures(o);
    if (o.coco.size() > 2) {
      f.set("eval_map50", o.coco[1]);
      f.set("eval_map75", o.coco[2]);
    }
    return f;
  }

 private:
  static constexpr int64_t kColumns = 7;

  // COCO's figures of the rows' boxes in the items' images.
  EvalOutcome cocoOutcome(const std::vector<int64_t>& items, const torch::Tensor& rows) const {
    std::vector<CocoBox> found;
    const auto r = rows.accessor<double, 2>();
    for (int64_t k = 0; k < rows.size(0); ++k) {
      CocoBox d;
      d.image = static_cast<int64_t>(r[k][0]);
      d.category = static_cast<int64_t>(r[k][1]);
      d.box = {r[k][2], r[k][3], r[k][4], r[k][5]};
      d.area = d.box[2] * d.box[3];
      d.score = r[k][6];
      found.push_back(d);
    }
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

  // One image's detections as rows, back in its own pixels (COCO's results format).
  void addRows(std::vector<double>& rows, const detection::PackedImage& image, const detection::Detections& d) const {
    const torch::Tensor b = (d.boxes.to(torch::kCPU, torch::kFloat64) / image.scale).contiguous();
    const torch::Tensor s = d.scores.to(torch::kCPU, torch::kFloat64).contiguous();
    const torch::Tensor l = d.labels.to(torch::kCPU).contiguous();
    const auto bb = b.accessor<double, 2>();
    const auto ss = s.accessor<double, 1>();
    const auto ll = l.accessor<int64_t, 1>();
    for (int64_t k = 0; k < b.size(0); ++k) {
      const auto category = static_cast<double>(m_boxes->categories[static_cast<size_t>(ll[k] - 1)].id);
      rows.insert(rows.end(), {static_cast<double>(image.item), category, bb[k][0], bb[k][1], bb[k][2] - bb[k][0],
                               bb[k][3] - bb[k][1], ss[k]});
    }
  }

  std::shared_ptr<const BoxAnnotations> m_boxes;
  detection::BoxAugment m_augment;
  std::vector<std::string> m_parts;  // the detector's losses (torchvision's names)
};

}  // namespace

std::unique_ptr<Task> makeDetection(const TrainConfig& config, const TaskData& data) {
  return std::make_unique<Detection>(config, data);
}

}  // namespace studio
