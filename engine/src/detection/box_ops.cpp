#include "detection/box_ops.h"

#include "detection/roi_align_cpu.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

namespace studio::detection {
namespace {

// Greedy suppression in the boxes' own type, as torchvision's CPU kernel.
template <typename T>
torch::Tensor suppress(const torch::Tensor& boxes, const torch::Tensor& order, double iouThreshold) {
  const int64_t n = boxes.size(0);
  const torch::Tensor b = boxes.contiguous();
  const T* p = b.data_ptr<T>();
  const int64_t* ord = order.data_ptr<int64_t>();
  std::vector<T> area(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    area[static_cast<size_t>(i)] = (p[4 * i + 2] - p[4 * i]) * (p[4 * i + 3] - p[4 * i + 1]);
  std::vector<char> suppressed(static_cast<size_t>(n), 0);
  std::vector<int64_t> keep;
  for (int64_t a = 0; a < n; ++a) {
    const int64_t i = ord[a];
    if (suppressed[static_cast<size_t>(i)]) continue;
    keep.push_back(i);
    const T ix1 = p[4 * i], iy1 = p[4 * i + 1], ix2 = p[4 * i + 2], iy2 = p[4 * i + 3];
    for (int64_t c = a + 1; c < n; ++c) {
      const int64_t j = ord[c];
      if (suppressed[static_cast<size_t>(j)]) continue;
      const T w = std::max(static_cast<T>(0), std::min(ix2, p[4 * j + 2]) - std::max(ix1, p[4 * j]));
      const T h = std::max(static_cast<T>(0), std::min(iy2, p[4 * j + 3]) - std::max(iy1, p[4 * j + 1]));
      const T inter = w * h;
      const T overlap = inter / (area[static_cast<size_t>(i)] + area[static_cast<size_t>(j)] - inter);
      if (overlap > iouThreshold) suppressed[static_cast<size_t>(j)] = 1;
    }
  }
  return torch::tensor(keep, torch::kLong);
}

void checkBoxes(const torch::Tensor& boxes, const torch::Tensor& scores) {
  if (boxes.dim() != 2 || boxes.size(1) != 4) throw std::invalid_argument("nms: boxes must be N x 4 (x1, y1, x2, y2)");
  if (scores.dim() != 1 || scores.size(0) != boxes.size(0)) throw std::invalid_argument("nms: one score per box");
}

}  // namespace

torch::Tensor nms(const torch::Tensor& boxes, const torch::Tensor& scores, double iouThreshold) {
  checkBoxes(boxes, scores);
  if (boxes.size(0) == 0) return torch::empty({0}, boxes.options().dtype(torch::kLong));
  // The loop is sequential: on the host, in the boxes' type (half and
  // bfloat16 in float).
  torch::Tensor b = boxes.detach().to(torch::kCPU);
  if (b.scalar_type() != torch::kDouble) b = b.to(torch::kFloat);
  const torch::Tensor order = std::get<1>(scores.detach().to(torch::kCPU).sort(/*stable=*/true, 0, true));
  const torch::Tensor keep = b.scalar_type() == torch::kDouble ? suppress<double>(b, order, iouThreshold)
                                                               : suppress<float>(b, order, iouThreshold);
  return keep.to(boxes.device());
}

torch::Tensor batchedNms(const torch::Tensor& boxes, const torch::Tensor& scores, const torch::Tensor& idxs,
                         double iouThreshold) {
  checkBoxes(boxes, scores);
  if (boxes.numel() == 0) return torch::empty({0}, boxes.options().dtype(torch::kLong));
  const int64_t perCategoryAbove = boxes.device().is_cpu() ? 4000 : 20000;
  if (boxes.numel() > perCategoryAbove) {
    torch::Tensor keepMask = torch::zeros_like(scores, torch::kBool);
    const torch::Tensor categories = std::get<0>(at::_unique(idxs));
    for (int64_t k = 0; k < categories.size(0); ++k) {
      const torch::Tensor members = torch::where(idxs == categories[k])[0];
      const torch::Tensor kept = nms(boxes.index_select(0, members), scores.index_select(0, members), iouThreshold);
      keepMask.index_put_({members.index_select(0, kept)}, true);
    }
    const torch::Tensor keep = torch::where(keepMask)[0];
    return keep.index_select(0, std::get<1>(scores.index_select(0, keep).sort(/*stable=*/false, 0, true)));
  }
  // Each category's boxes moved past the others': one NMS suppresses only
  // within a category.
  const torch::Tensor maxCoordinate = boxes.max();
  const torch::Tensor offsets = idxs.to(boxes.options()) * (maxCoordinate + torch::ones({}, boxes.options()));
  return nms(boxes + offsets.unsqueeze(1), scores, iouThreshold);
}

namespace {

// RoIAlign of rois (K x 5, already in the input's dtype) with a grid of
// gh x gw samples in every bin.
torch::Tensor roiAlignGrid(const torch::Tensor& input, const torch::Tensor& r, int64_t ph, int64_t pw,
                           double spatialScale, int64_t gh, int64_t gw, bool aligned) {
  const int64_t K = r.size(0), C = input.size(1), H = input.size(2), W = input.size(3);
  const auto opts = input.options();
  if (gh <= 0 || gw <= 0) return torch::zeros({K, C, ph, pw}, opts);  // a roi of no height or width
  const double offset = aligned ? 0.5 : 0.0;
  const torch::Tensor x1 = r.select(1, 1) * spatialScale - offset, y1 = r.select(1, 2) * spatialScale - offset;
  torch::Tensor width = r.select(1, 3) * spatialScale - offset - x1;
  torch::Tensor height = r.select(1, 4) * spatialScale - offset - y1;
  if (!aligned) {
    width = width.clamp_min(1.0);
    height = height.clamp_min(1.0);
  }
  const torch::Tensor binH = height / static_cast<double>(ph), binW = width / static_cast<double>(pw);
  const double count = static_cast<double>(gh * gw);
  // Sample positions: y = y1 + p * binH + (i + 0.5) * binH / gh, for bin p
  // and sample i (K x ph*gh), the same for x.
  auto positions = [&](const torch::Tensor& start, const torch::Tensor& bin, int64_t bins, int64_t grid) {
    const torch::Tensor p = torch::arange(bins, opts).repeat_interleave(grid);
    const torch::Tensor i = torch::arange(grid, opts).repeat({bins}) + 0.5;
    return start.unsqueeze(1) + p.unsqueeze(0) * bin.unsqueeze(1) +
           i.unsqueeze(0) * bin.unsqueeze(1) / static_cast<double>(grid);
  };
  const torch::Tensor y = positions(y1, binH, ph, gh), x = positions(x1, binW, pw, gw);  // K x S
  // Bilinear weights as torchvision's bilinear_interpolate: samples beyond
  // [-1, size] are 0; the others clamped at 0 and at the last pixel.
  auto axis = [&](torch::Tensor v, int64_t size, torch::Tensor& low, torch::Tensor& high, torch::Tensor& frac,
                  torch::Tensor& valid) {
    valid = (v >= -1.0) & (v <= static_cast<double>(size));
    v = v.clamp_min(0.0);
    low = v.floor().to(torch::kLong);
    const torch::Tensor last = low >= size - 1;
    low = low.clamp_max(size - 1);
    high = torch::where(last, low, low + 1);
    v = torch::where(last, low.to(opts), v);
    frac = v - low.to(opts);
  };
  torch::Tensor yl, yh, ly, vy, xl, xh, lx, vx;
  axis(y, H, yl, yh, ly, vy);
  axis(x, W, xl, xh, lx, vx);
  // The input's pixels as rows of channels, gathered at each roi's four
  // corners of every sample: (K, C, Sy, Sx), memory by samples, not by the
  // feature map's size.
  const torch::Tensor batch = r.select(1, 0).to(torch::kLong);
  const torch::Tensor pixels = input.permute({0, 2, 3, 1}).reshape({-1, C});
  auto corner = [&](const torch::Tensor& yi, const torch::Tensor& xi) {
    const torch::Tensor flat = (batch.view({K, 1, 1}) * (H * W) + yi.unsqueeze(2) * W + xi.unsqueeze(1)).reshape(-1);
    return pixels.index_select(0, flat).reshape({K, yi.size(1), xi.size(1), C}).permute({0, 3, 1, 2});
  };
  const torch::Tensor hy = (1 - ly).unsqueeze(1).unsqueeze(3), lyy = ly.unsqueeze(1).unsqueeze(3);
  const torch::Tensor hx = (1 - lx).unsqueeze(1).unsqueeze(2), lxx = lx.unsqueeze(1).unsqueeze(2);
  torch::Tensor value =
      hy * hx * corner(yl, xl) + hy * lxx * corner(yl, xh) + lyy * hx * corner(yh, xl) + lyy * lxx * corner(yh, xh);
  const torch::Tensor valid = (vy.unsqueeze(2) & vx.unsqueeze(1)).unsqueeze(1);
  value = value * valid.to(opts);
  // Each bin: the mean of its gh x gw samples, summed one after another in
  // torchvision's order (row by row), so float sums round as its kernel's.
  value = value.reshape({K, C, ph, gh, pw, gw});
  torch::Tensor sum;
  for (int64_t iy = 0; iy < gh; ++iy)
    for (int64_t ix = 0; ix < gw; ++ix) {
      const torch::Tensor sample = value.select(5, ix).select(3, iy);
      sum = sum.defined() ? sum + sample : sample;
    }
  return sum / count;
}

}  // namespace

namespace {

void checkRoiAlignShapes(const torch::Tensor& input, const torch::Tensor& rois) {
  if (input.dim() != 4) throw std::invalid_argument("roi_align: input must be N x C x H x W");
  if (rois.dim() != 2 || rois.size(1) != 5) throw std::invalid_argument("roi_align: rois must be K x 5");
}

}  // namespace

torch::Tensor roiAlign(const torch::Tensor& input, const torch::Tensor& rois, std::array<int64_t, 2> outputSize,
                       double spatialScale, int64_t samplingRatio, bool aligned) {
  checkRoiAlignShapes(input, rois);
  // On the CPU: torchvision's kernels, forward and backward (roi_align_cpu.h),
  // without the tensor form's gathered corners.
  if (input.device().is_cpu() && (input.scalar_type() == torch::kFloat || input.scalar_type() == torch::kDouble))
    return roiAlignCpu(input, rois.detach().to(input.options()), outputSize[0], outputSize[1], spatialScale,
                       samplingRatio, aligned);
  return roiAlignTensors(input, rois, outputSize, spatialScale, samplingRatio, aligned);
}

torch::Tensor roiAlignTensors(const torch::Tensor& input, const torch::Tensor& rois, std::array<int64_t, 2> outputSize,
                              double spatialScale, int64_t samplingRatio, bool aligned) {
  checkRoiAlignShapes(input, rois);
  const int64_t ph = outputSize[0], pw = outputSize[1];
  const torch::Tensor r = rois.detach().to(input.options());  // no gradient to the boxes, as torchvision's
  if (r.size(0) == 0) return torch::zeros({0, input.size(1), ph, pw}, input.options());
  if (samplingRatio > 0) return roiAlignGrid(input, r, ph, pw, spatialScale, samplingRatio, samplingRatio, aligned);
  // Adaptive: each roi's grid as wide and high as its bins are pixels (ceil).
  const double offset = aligned ? 0.5 : 0.0;
  const torch::Tensor cpu = r.to(torch::kCPU, torch::kDouble);
  std::vector<torch::Tensor> parts;
  for (int64_t k = 0; k < r.size(0); ++k) {
    double w = cpu[k][3].item<double>() * spatialScale - offset - (cpu[k][1].item<double>() * spatialScale - offset);
    double h = cpu[k][4].item<double>() * spatialScale - offset - (cpu[k][2].item<double>() * spatialScale - offset);
    if (!aligned) w = std::max(w, 1.0), h = std::max(h, 1.0);
    const auto gh = static_cast<int64_t>(std::ceil(h / static_cast<double>(ph)));
    const auto gw = static_cast<int64_t>(std::ceil(w / static_cast<double>(pw)));
    parts.push_back(roiAlignGrid(input, r.slice(0, k, k + 1), ph, pw, spatialScale, gh, gw, aligned));
  }
  return torch::cat(parts, 0);
}

}  // namespace studio::detection
