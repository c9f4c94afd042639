// Object detection (task.kind detection, issue 43): train/tasks/detection_task.h.
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/Generator.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "detection/detector_net.h"
#include "models/autocast_scope.h"
#include "models/model.h"
#include "studio/coco_eval.h"
#include "train/tasks/classification_eval.h"
#include "train/tasks/detection_task.h"

namespace studio {
namespace {

constexpr int64_t kColumns = 7;  // a detection's row: item, category id, x, y, width, height, score

// Masks as one column of int64 (height, width, runs, then the runs), so
// that the ranks' masks gather as their rows do; and back.
torch::Tensor packMasks(const std::vector<Rle>& masks) {
  std::vector<int64_t> flat;
  for (const Rle& m : masks) {
    flat.insert(flat.end(), {m.height, m.width, static_cast<int64_t>(m.counts.size())});
    flat.insert(flat.end(), m.counts.begin(), m.counts.end());
  }
  return torch::tensor(flat, torch::kInt64).view({-1, 1});
}

std::vector<Rle> unpackMasks(const torch::Tensor& column) {
  const torch::Tensor c = column.view({-1}).contiguous();
  const int64_t* v = c.data_ptr<int64_t>();
  std::vector<Rle> out;
  for (int64_t i = 0; i < c.numel();) {
    Rle m{v[i], v[i + 1], {}};
    const int64_t n = v[i + 2];
    m.counts.assign(v + i + 3, v + i + 3 + n);
    out.push_back(std::move(m));
    i += 3 + n;
  }
  return out;
}

}  // namespace

Detection::Detection(const TrainConfig& c, const TaskData& data)
    : m_boxes(data.boxes),
      m_augment(detection::boxAugmentOf(c.data)),
      m_parts(detection::detectorLossParts(c.model.kind)) {
  if (!m_boxes) throw std::logic_error("task.kind " + c.task.kind + " needs the data's boxes");
}

torch::Tensor Detection::loss(const torch::Tensor&, const torch::Tensor&) const {
  throw std::logic_error("a detector's loss comes from its forward pass (modelLoss)");
}

torch::Tensor Detection::modelLoss(Model& model, const torch::Tensor& x, const torch::Tensor& y,
                                   torch::Tensor& parts) const {
  std::vector<torch::Tensor> images, boxes, labels, masks;
  at::Generator gen = at::detail::getDefaultCPUGenerator();
  for (auto& im : detection::unpackBatch(x, y)) {
    detection::BoxedImage b{im.image, im.boxes, im.labels, trainingMasks(im)};
    if (b.masks.defined()) b.masks = b.masks.to(b.image.device());
    if (m_augment.any()) b = detection::augmentBoxed(b, m_augment, gen);
    images.push_back(b.image);
    boxes.push_back(b.boxes);
    labels.push_back(b.labels);
    if (b.masks.defined()) masks.push_back(b.masks);
  }
  const detection::DetectionLosses l = model.boxLosses(images, boxes, labels, masks);
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

EvalOutcome Detection::evaluate(Model& model, const Dataset& set, const LoaderOptions& transform,
                                const EvalOptions& options, const torch::Device& device) const {
  EvalOptions o = options;
  o.batchSize = std::max<int64_t>(1, std::min<int64_t>(options.batchSize, 16));
  // A row per detection (in the image's own pixels), and its mask when the boxes carry masks.
  std::vector<double> rows;
  std::vector<int64_t> items;
  std::vector<Rle> masks;
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
                       addMasks(masks, packed[i], out[i]);
                     }
                   });
  torch::Tensor found = torch::tensor(rows, torch::kFloat64).view({-1, kColumns});
  if (options.group) {
    found = gatherUnevenRows(found.to(device), *options.group, "the evaluation's boxes").cpu();
    if (withMasks())
      masks =
          unpackMasks(gatherUnevenRows(packMasks(masks).to(device), *options.group, "the evaluation's masks").cpu());
    const torch::Tensor mine = torch::tensor(items, torch::kInt64).view({-1, 1}).to(device);
    const torch::Tensor all = gatherRows(mine, set.size(), *options.group).cpu().view({-1});
    items.assign(all.data_ptr<int64_t>(), all.data_ptr<int64_t>() + all.numel());
  }
  return cocoOutcome(items, found, masks);
}

EvalReport Detection::report(const EvalOutcome& o, const ReportInput& in) const {
  EvalReport r = reportFor(name(), o, in);
  r.coco = o.coco;
  r.apPerClass = o.apPerClass;
  r.precision50 = o.precision50;
  r.maskCoco = o.maskCoco;
  r.maskApPerClass = o.maskApPerClass;
  r.map = o.map;
  r.classes = in.data.classNames;
  return r;
}

Figures Detection::figures(const EvalOutcome& o) const {
  Figures f = Task::figures(o);
  if (o.coco.size() > 2) {
    f.set("eval_map50", o.coco[1]);
    f.set("eval_map75", o.coco[2]);
  }
  if (o.maskCoco.size() > 1) {
    f.set("eval_mask_map", o.maskCoco[0]);
    f.set("eval_mask_map50", o.maskCoco[1]);
  }
  return f;
}

// COCO's figures of the rows' boxes (and masks: one per row) in the items' images.
EvalOutcome Detection::cocoOutcome(const std::vector<int64_t>& items, const torch::Tensor& rows,
                                   const std::vector<Rle>& masks) const {
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
  const std::vector<CocoBox> truth = cocoGroundTruth(*m_boxes, /*byIndex=*/true, inSet);
  const CocoStats stats = cocoEvaluate(items, truth, found);
  EvalOutcome o;
  o.loss = std::numeric_limits<double>::quiet_NaN();  // torchvision's detectors give no loss in evaluation
  o.coco.assign(stats.stats.begin(), stats.stats.end());
  o.map = stats.stats[0];
  std::vector<int64_t> ids;
  for (const auto& c : m_boxes->categories) ids.push_back(c.id);
  CocoPerClass perClass = cocoPerClass(stats, ids);
  o.apPerClass = std::move(perClass.ap);
  o.precision50 = std::move(perClass.precision50);
  if (withMasks()) {
    const CocoStats segm = cocoEvaluateMasks(items, truth, found, masks);
    o.maskCoco.assign(segm.stats.begin(), segm.stats.end());
    o.maskApPerClass = cocoPerClass(segm, ids).ap;
  }
  return o;
}

// One image's detections as rows, back in its own pixels (COCO's results format).
void Detection::addRows(std::vector<double>& rows, const detection::PackedImage& image,
                        const detection::Detections& d) const {
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

std::unique_ptr<Task> makeDetection(const TrainConfig& config, const TaskData& data) {
  return std::make_unique<Detection>(config, data);
}

}  // namespace studio
