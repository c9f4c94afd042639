// Semantic segmentation (task.kind segmentation, issue 61): a class per
// pixel. Training follows torchvision's references/segmentation: each image
// of the batch resized, flipped and cropped with its mask
// (data/mask_augment.h, the batch's images from the pool of
// data/mask_data.h), normalised, and the loss is cross-entropy per pixel
// with the ignore index, plus 0.5 x the auxiliary head's
// (segmentation/segmentation_loss.h). An evaluation resizes each image's
// shorter side to model.segmenter.base_size (the mask by nearest, as the
// references' evaluation preset does), counts the confusion matrix of the
// arg-max on the device and reads it back once; its figures are the
// references' (studio/segmentation_figures.h).
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/Generator.h>
#include <torch/nn/functional/loss.h>

#include <algorithm>
#include <map>
#include <stdexcept>

#include "data/mask_augment.h"
#include "data/mask_data.h"
#include "dist/process_group.h"
#include "models/autocast_scope.h"
#include "models/model.h"
#include "segmentation/segmentation_loss.h"
#include "train/tasks/classification_eval.h"
#include "train/tasks/task.h"

namespace studio {
namespace {

class Segmentation : public Task {
 public:
  Segmentation(const TrainConfig& c, const TaskData& data)
      : m_classes(data.classes), m_ignore(c.data.ignore_index), m_baseSize(c.model.segmenter.base_size) {
    if (m_classes < 2) throw std::logic_error("task.kind segmentation needs the data's classes");
    // SegmentationPresetTrain: RandomResize(0.5 x base, 2 x base), the flip, RandomCrop(crop).
    m_augment.minSize = m_baseSize / 2;
    m_augment.maxSize = 2 * m_baseSize;
    m_augment.flipProb = c.data.augment_flip ? 0.5 : 0.0;
    m_augment.cropHeight = m_augment.cropWidth = c.model.segmenter.crop_size;
    m_augment.ignoreIndex = static_cast<uint8_t>(m_ignore);
    m_augment.photometric = c.data.augment_photometric;
    const std::vector<double> mean = data.mean.empty() ? std::vector<double>(3, 0.0) : data.mean;
    const std::vector<double> std = data.std.empty() ? std::vector<double>(3, 1.0) : data.std;
    m_mean = torch::tensor(mean, torch::kFloat64).to(torch::kFloat32).view({1, 3, 1, 1}).to(data.device);
    m_std = torch::tensor(std, torch::kFloat64).to(torch::kFloat32).view({1, 3, 1, 1}).to(data.device);
  }
  std::string name() const override { return "segmentation"; }

  torch::Tensor loss(const torch::Tensor&, const torch::Tensor&) const override {
    throw std::logic_error("a segmenter's loss takes its masks through its augmentations (modelLoss)");
  }
  bool lossInModel() const override { return true; }

  torch::Tensor modelLoss(Model& model, const torch::Tensor& x, const torch::Tensor& y,
                          torch::Tensor& parts) const override {
    at::Generator gen = at::detail::getDefaultCPUGenerator();
    std::vector<torch::Tensor> images, masks;
    for (const MaskedRow& row : unpackMaskedBatch(x, y)) {
      const MaskedImage m = augmentMasked({row.image, row.mask}, m_augment, gen);
      images.push_back(m.image);
      masks.push_back(m.mask);
    }
    const auto [out, aux] = model.segmentPixels(normalised(torch::stack(images)));
    const torch::Tensor l = segmentationLoss({out, aux}, torch::stack(masks), m_ignore).to(torch::kFloat32);
    parts = torch::empty({0}, l.options());
    return l;
  }

  // Each image at the evaluation's size, one pass per shape; the counts and
  // the loss's sum stay on the device until the end.
  EvalOutcome evaluate(Model& model, const Dataset& set, const LoaderOptions& transform, const EvalOptions& options,
                       const torch::Device& device) const override {
    EvalOptions o = options;
    o.batchSize = std::max<int64_t>(1, std::min<int64_t>(options.batchSize, 16));
    LoaderOptions raw = transform;
    raw.keepBytes = true;
    torch::Tensor counts = torch::zeros({m_classes, m_classes}, torch::TensorOptions(torch::kInt64).device(device));
    torch::Tensor lossSum = torch::zeros({2}, torch::TensorOptions(torch::kFloat64).device(device));  // sum, pixels
    int64_t images = 0;
    forEachEvalSlice(model, set, raw, o, device, [&](const torch::Tensor& x, const torch::Tensor& y, int64_t, int64_t) {
      std::map<std::pair<int64_t, int64_t>, std::vector<MaskedImage>> byShape;
      for (const MaskedRow& row : unpackMaskedBatch(x, y)) {
        MaskedImage m = resizeShorterSide({row.image, row.mask}, m_baseSize);
        byShape[{m.image.size(1), m.image.size(2)}].push_back(std::move(m));
        ++images;
      }
      for (const auto& [shape, group] : byShape) {
        std::vector<torch::Tensor> xs, ms;
        for (const auto& m : group) {
          xs.push_back(m.image);
          ms.push_back(m.mask);
        }
        const torch::Tensor target = torch::stack(ms).to(torch::kInt64);
        torch::Tensor logits;
        {
          AutocastScope ac(device.type(), o.autocast, o.autocastDtype);
          logits = model.forward(normalised(torch::stack(xs))).to(torch::kFloat32);
        }
        counts += confusionCounts(logits, target, m_classes);
        namespace F = torch::nn::functional;
        const torch::Tensor sum = F::cross_entropy(
            logits, target, F::CrossEntropyFuncOptions().ignore_index(m_ignore).reduction(torch::kSum));
        lossSum[0] += sum.to(torch::kFloat64);
        lossSum[1] += target.ne(m_ignore).sum().to(torch::kFloat64);
      }
    });
    if (options.group) {
      std::vector<torch::Tensor> both{counts, lossSum};
      options.group->allReduceSum(both, "the evaluation's pixel counts");
    }
    const torch::Tensor c = counts.cpu().contiguous();
    const torch::Tensor l = lossSum.cpu();
    EvalOutcome outcome;
    const ConfusionMatrix matrix = ConfusionMatrix::fromCounts(
        m_classes, std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel()));
    outcome.segmentation = segmentationFigures(matrix);
    outcome.accuracy = outcome.segmentation.pixelAccuracy;
    outcome.loss =
        l[1].item<double>() > 0 ? l[0].item<double>() / l[1].item<double>() : std::numeric_limits<double>::quiet_NaN();
    for (int64_t t = 0; t < m_classes; ++t)
      outcome.confusion.emplace_back(c.data_ptr<int64_t>() + t * m_classes,
                                     c.data_ptr<int64_t>() + (t + 1) * m_classes);
    return outcome;
  }

  EvalReport report(const EvalOutcome& o, const ReportInput& in) const override {
    EvalReport r = reportFor(name(), o, in);
    r.segmentation = o.segmentation;
    r.confusion = o.confusion;
    r.classes = in.data.classNames;
    return r;
  }

  Figures figures(const EvalOutcome& o) const override {
    Figures f;
    f.set("eval_loss", o.loss);
    f.set("eval_miou", o.segmentation.meanIou);
    f.set("eval_pixel_accuracy", o.segmentation.pixelAccuracy);
    f.set("eval_dice", o.segmentation.meanDice);
    return f;
  }

 private:
  // uint8 [B, 3, H, W] in 0..255 to the model's input.
  torch::Tensor normalised(const torch::Tensor& pixels) const {
    const torch::Tensor mean = m_mean.to(pixels.device()), std = m_std.to(pixels.device());
    return pixels.to(torch::kFloat32).div_(255.0).sub_(mean).div_(std);
  }

  int64_t m_classes;
  int64_t m_ignore;
  int64_t m_baseSize;
  SegmentationAugment m_augment;
  torch::Tensor m_mean, m_std;
};

}  // namespace

std::unique_ptr<Task> makeSegmentation(const TrainConfig& config, const TaskData& data) {
  return std::make_unique<Segmentation>(config, data);
}

}  // namespace studio
