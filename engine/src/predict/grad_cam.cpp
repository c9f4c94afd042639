// TensorPredict::gradCam and ::attributions (studio/predict.h). Grad-CAM: Selvaraju et al. 2017, "Grad-CAM:
// Visual Explanations from Deep Networks via Gradient-based Localization",
// eq. 1 and 2: each channel of the stage weighted by its gradient's mean over
// the positions, summed, through a ReLU; here upsampled to the input's size
// (bilinear, align_corners false, as torch.nn.functional.interpolate) and
// divided by its maximum.
#include <torch/csrc/autograd/autograd.h>

#include "data/decoded_images.h"
#include "predict/predictor_impl.h"
#include "studio/errors.h"

namespace studio {
void TensorPredict::checkOutput(int64_t index, const std::string& what) const {
  const auto n = static_cast<int64_t>(classes.empty() ? targets.size() : classes.size());
  if (index >= n)
    throw InputError(what + ": output " + std::to_string(index) + " is not one of the model's " + std::to_string(n) +
                     (classes.empty() ? (targetMean.defined() ? " targets" : " labels") : " classes"));
}

TensorPredict::Explained TensorPredict::explained(const torch::Tensor& logits, int64_t asked) const {
  const torch::Tensor out = logits.detach()[0].cpu();
  Explained e;
  if (!classes.empty() || !targetMean.defined()) {  // probabilities: softmax over classes, or each label's sigmoid
    const torch::Tensor probs = classes.empty() ? torch::sigmoid(out) : torch::softmax(out, 0);
    e.index = asked >= 0 ? asked : probs.argmax().item<int64_t>();
    e.figure = probs[e.index].item<float>();
  } else {
    e.index = asked >= 0 ? asked : 0;
    e.figure = (out[e.index].to(torch::kFloat64) * targetStd[e.index] + targetMean[e.index]).item<float>();
  }
  const auto& names = classes.empty() ? targets : classes;
  e.name = static_cast<size_t>(e.index) < names.size() ? names[static_cast<size_t>(e.index)] : std::to_string(e.index);
  return e;
}

GradCamMap TensorPredict::gradCam(const std::string& imageFile, int64_t classIndex) {
  if (!images()) throw InputError("Grad-CAM explains image models; " + description + " takes a table's rows");
  checkOutput(classIndex, "Grad-CAM");
  const torch::Tensor pixels = inputPixels(imageFile);
  torch::AutoGradMode grad(true);
  const torch::Tensor x = normalise(pixels.unsqueeze(0)).requires_grad_(true);
  torch::Tensor stage;
  GradCamMap out;
  const torch::Tensor logits = model->forwardWithStage(x, stage, out.layer).to(torch::kFloat32);
  const Explained e = explained(logits, classIndex);
  out.classIndex = e.index;
  out.probability = e.figure;
  out.output = e.name;
  const torch::Tensor g = torch::autograd::grad({logits[0][out.classIndex]}, {stage})[0];
  const torch::Tensor weights = g.mean({2, 3}, /*keepdim=*/true);
  torch::Tensor cam = torch::relu((weights * stage.detach()).sum(1, /*keepdim=*/true));
  cam = torch::upsample_bilinear2d(cam, {input.height, input.width}, /*align_corners=*/false);
  const float peak = cam.max().item<float>();
  if (peak > 0) cam = cam / peak;
  cam = cam.squeeze().contiguous().cpu();
  out.height = input.height;
  out.width = input.width;
  out.channels = input.channels;
  out.heat.assign(cam.data_ptr<float>(), cam.data_ptr<float>() + cam.numel());
  const torch::Tensor hwc = pixels.permute({1, 2, 0}).contiguous();
  out.image.assign(hwc.data_ptr<uint8_t>(), hwc.data_ptr<uint8_t>() + hwc.numel());
  return out;
}

FeatureAttribution TensorPredict::attributions(const std::vector<float>& rawFeatures, int64_t classIndex) {
  if (images())
    throw InputError("feature attributions explain table models; " + description +
                     " takes images (Grad-CAM "
                     "shows where it looks)");
  const auto width = static_cast<size_t>(input.features);
  if (rawFeatures.size() != width)
    throw InputError("the row has " + std::to_string(rawFeatures.size()) + " features; the model takes " +
                     std::to_string(width));
  checkOutput(classIndex, "feature attributions");
  torch::AutoGradMode grad(true);
  const torch::Tensor raw =
      torch::from_blob(const_cast<float*>(rawFeatures.data()), {1, input.features}, torch::kFloat32);
  const torch::Tensor x = normalise(raw).detach().requires_grad_(true);
  const torch::Tensor logits = model->forward(x).to(torch::kFloat32);
  const Explained e = explained(logits, classIndex);
  FeatureAttribution out;
  out.classIndex = e.index;
  out.probability = e.figure;
  out.output = e.name;
  const torch::Tensor g = torch::autograd::grad({logits[0][out.classIndex]}, {x})[0];
  const torch::Tensor a = (g * x.detach())[0].contiguous().cpu();
  out.features = features;
  out.values.assign(a.data_ptr<float>(), a.data_ptr<float>() + a.numel());
  return out;
}

}  // namespace studio
