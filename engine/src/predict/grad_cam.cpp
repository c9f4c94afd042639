// Predictor::gradCam and Predictor::attributions (studio/predict.h). Grad-CAM: Selvaraju et al. 2017, "Grad-CAM:
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

GradCamMap Predictor::gradCam(const std::string& imageFile, int64_t classIndex) {
  if (!m->images())
    throw InputError("Grad-CAM explains image models; " + m->description + " takes a table's rows");
  const auto classes = static_cast<int64_t>(m->classes.size());
  if (classIndex >= classes)
    throw InputError("Grad-CAM: class " + std::to_string(classIndex) + " is not one of the model's " +
                     std::to_string(classes) + " classes");
  const torch::Tensor pixels = m->inputPixels(imageFile);
  torch::AutoGradMode grad(true);
  const torch::Tensor x = m->normalise(pixels.unsqueeze(0)).requires_grad_(true);
  torch::Tensor stage;
  GradCamMap out;
  const torch::Tensor logits = m->model->forwardWithStage(x, stage, out.layer).to(torch::kFloat32);
  const torch::Tensor probs = torch::softmax(logits.detach(), 1)[0].cpu();
  out.classIndex = classIndex >= 0 ? classIndex : probs.argmax().item<int64_t>();
  out.probability = probs[out.classIndex].item<float>();
  const torch::Tensor g = torch::autograd::grad({logits[0][out.classIndex]}, {stage})[0];
  const torch::Tensor weights = g.mean({2, 3}, /*keepdim=*/true);
  torch::Tensor cam = torch::relu((weights * stage.detach()).sum(1, /*keepdim=*/true));
  cam = torch::upsample_bilinear2d(cam, {m->input.height, m->input.width}, /*align_corners=*/false);
  const float peak = cam.max().item<float>();
  if (peak > 0) cam = cam / peak;
  cam = cam.squeeze().contiguous().cpu();
  out.height = m->input.height;
  out.width = m->input.width;
  out.channels = m->input.channels;
  out.heat.assign(cam.data_ptr<float>(), cam.data_ptr<float>() + cam.numel());
  const torch::Tensor hwc = pixels.permute({1, 2, 0}).contiguous();
  out.image.assign(hwc.data_ptr<uint8_t>(), hwc.data_ptr<uint8_t>() + hwc.numel());
  return out;
}

FeatureAttribution Predictor::attributions(const std::vector<float>& rawFeatures, int64_t classIndex) {
  if (m->images())
    throw InputError("feature attributions explain table models; " + m->description + " takes images (Grad-CAM "
                     "shows where it looks)");
  const auto width = static_cast<size_t>(m->input.features);
  if (rawFeatures.size() != width)
    throw InputError("the row has " + std::to_string(rawFeatures.size()) + " features; the model takes " +
                     std::to_string(width));
  const auto classes = static_cast<int64_t>(m->classes.size());
  if (classIndex >= classes)
    throw InputError("class " + std::to_string(classIndex) + " is not one of the model's " + std::to_string(classes) +
                     " classes");
  torch::AutoGradMode grad(true);
  const torch::Tensor raw = torch::from_blob(const_cast<float*>(rawFeatures.data()), {1, m->input.features},
                                             torch::kFloat32);
  const torch::Tensor x = m->normalise(raw).detach().requires_grad_(true);
  const torch::Tensor logits = m->model->forward(x).to(torch::kFloat32);
  const torch::Tensor probs = torch::softmax(logits.detach(), 1)[0].cpu();
  FeatureAttribution out;
  out.classIndex = classIndex >= 0 ? classIndex : probs.argmax().item<int64_t>();
  out.probability = probs[out.classIndex].item<float>();
  const torch::Tensor g = torch::autograd::grad({logits[0][out.classIndex]}, {x})[0];
  const torch::Tensor a = (g * x.detach())[0].contiguous().cpu();
  out.features = m->features;
  out.values.assign(a.data_ptr<float>(), a.data_ptr<float>() + a.numel());
  return out;
}

}  // namespace studio
