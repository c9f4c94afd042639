#include "detection/roi_align_cpu.h"

#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <torch/autograd.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace studio::detection {
namespace {

template <typename T>
struct Corners {
  int64_t pos1 = 0, pos2 = 0, pos3 = 0, pos4 = 0;
  T w1 = 0, w2 = 0, w3 = 0, w4 = 0;
  bool inside = false;  // a sample past the map ([-1, size]) has no pixels
};

// pre_calc_for_bilinear_interpolate: every sample's four pixels and weights.
template <typename T>
void corners(int64_t height, int64_t width, int64_t ph, int64_t pw, T startH, T startW, T binH, T binW, int64_t gridH,
             int64_t gridW, std::vector<Corners<T>>& out) {
  size_t k = 0;
  for (int64_t py = 0; py < ph; ++py)
    for (int64_t px = 0; px < pw; ++px)
      for (int64_t iy = 0; iy < gridH; ++iy) {
        const T yy = startH + static_cast<T>(py) * binH +
                     static_cast<T>(static_cast<float>(iy) + .5f) * binH / static_cast<T>(gridH);
        for (int64_t ix = 0; ix < gridW; ++ix) {
          const T xx = startW + static_cast<T>(px) * binW +
                       static_cast<T>(static_cast<float>(ix) + .5f) * binW / static_cast<T>(gridW);
          T x = xx, y = yy;
          Corners<T>& c = out[k++];
          if (y < -1.0 || y > static_cast<T>(height) || x < -1.0 || x > static_cast<T>(width)) {
            c = Corners<T>{};
            continue;
          }
          if (y <= 0) y = 0;
          if (x <= 0) x = 0;
          auto yLow = static_cast<int64_t>(y), xLow = static_cast<int64_t>(x);
          int64_t yHigh = 0, xHigh = 0;
          if (yLow >= height - 1) {
            yHigh = yLow = height - 1;
            y = static_cast<T>(yLow);
          } else {
            yHigh = yLow + 1;
          }
          if (xLow >= width - 1) {
            xHigh = xLow = width - 1;
            x = static_cast<T>(xLow);
          } else {
            xHigh = xLow + 1;
          }
          const T ly = y - static_cast<T>(yLow), lx = x - static_cast<T>(xLow);
          const T hy = static_cast<T>(1.) - ly, hx = static_cast<T>(1.) - lx;
          c.pos1 = yLow * width + xLow;
          c.pos2 = yLow * width + xHigh;
          c.pos3 = yHigh * width + xLow;
          c.pos4 = yHigh * width + xHigh;
          c.w1 = hy * hx;
          c.w2 = hy * lx;
          c.w3 = ly * hx;
          c.w4 = ly * lx;
          c.inside = true;
        }
      }
}

// One roi's samples: its batch index, its samples per bin and every
// sample's corners (bin by bin, row by row), as both kernels compute them.
template <typename T>
struct RoiSamples {
  int64_t batch = 0, perBin = 0;
  T count = 1;
  std::vector<Corners<T>> pre;
};

template <typename T>
void roiSamples(const T* r, int64_t H, int64_t W, int64_t ph, int64_t pw, T scale, int64_t sampling, bool aligned,
                RoiSamples<T>& out) {
  out.batch = static_cast<int64_t>(r[0]);
  const T offset = aligned ? static_cast<T>(0.5) : static_cast<T>(0.0);
  const T startW = r[1] * scale - offset, startH = r[2] * scale - offset;
  const T endW = r[3] * scale - offset, endH = r[4] * scale - offset;
  T roiW = endW - startW, roiH = endH - startH;
  if (!aligned) {
    roiW = std::max(roiW, static_cast<T>(1.));
    roiH = std::max(roiH, static_cast<T>(1.));
  }
  const T binH = roiH / static_cast<T>(ph), binW = roiW / static_cast<T>(pw);
  const int64_t gridH = sampling > 0 ? sampling : static_cast<int64_t>(std::ceil(roiH / static_cast<T>(ph)));
  const int64_t gridW = sampling > 0 ? sampling : static_cast<int64_t>(std::ceil(roiW / static_cast<T>(pw)));
  out.perBin = gridH * gridW;
  out.count = static_cast<T>(std::max<int64_t>(gridH * gridW, 1));
  out.pre.assign(static_cast<size_t>(gridH * gridW * ph * pw), Corners<T>{});
  corners(H, W, ph, pw, startH, startW, binH, binW, gridH, gridW, out.pre);
}

template <typename T>
void forward(const T* input, const T* rois, T* output, int64_t K, int64_t C, int64_t H, int64_t W, int64_t ph,
             int64_t pw, T scale, int64_t sampling, bool aligned) {
  at::parallel_for(0, K, 1, [&](int64_t begin, int64_t end) {
    RoiSamples<T> roi;
    for (int64_t n = begin; n < end; ++n) {
      roiSamples(rois + n * 5, H, W, ph, pw, scale, sampling, aligned, roi);
      const int64_t batch = roi.batch, perBin = roi.perBin;
      const T count = roi.count;
      const std::vector<Corners<T>>& pre = roi.pre;
      for (int64_t c = 0; c < C; ++c) {
        const T* in = input + (batch * C + c) * H * W;
        T* out = output + (n * C + c) * ph * pw;
        size_t k = 0;
        for (int64_t b = 0; b < ph * pw; ++b) {
          T value = 0.;
          for (int64_t s = 0; s < perBin; ++s) {
            const Corners<T>& q = pre[k++];
            value += q.w1 * in[q.pos1] + q.w2 * in[q.pos2] + q.w3 * in[q.pos3] + q.w4 * in[q.pos4];
          }
          out[b] = value / count;
        }
      }
    }
  });
}

// torchvision's roi_align_backward_kernel_impl: each output bin's gradient
// spread over its samples' four pixels, grad * w / count, added roi by roi,
// bin by bin, sample by sample. Channels apart (a channel's pixels take
// only its own bins' gradients), so each channel's sums are in the serial
// kernel's order whatever the threads. Each thread works out one roi's
// samples at a time, as the forward kernel does (with an adaptive sampling
// ratio a large roi has thousands a bin: all rois' at once would not fit);
// chunks of at least 16 channels keep that repeated work small.
template <typename T>
void backward(const T* grad, const T* rois, T* gradInput, int64_t K, int64_t C, int64_t H, int64_t W, int64_t ph,
              int64_t pw, T scale, int64_t sampling, bool aligned) {
  at::parallel_for(0, C, 16, [&](int64_t begin, int64_t end) {
    RoiSamples<T> roi;
    for (int64_t n = 0; n < K; ++n) {
      roiSamples(rois + n * 5, H, W, ph, pw, scale, sampling, aligned, roi);
      for (int64_t c = begin; c < end; ++c) {
        T* in = gradInput + (roi.batch * C + c) * H * W;
        const T* g = grad + (n * C + c) * ph * pw;
        size_t k = 0;
        for (int64_t b = 0; b < ph * pw; ++b)
          for (int64_t s = 0; s < roi.perBin; ++s) {
            const Corners<T>& q = roi.pre[k++];
            if (!q.inside) continue;
            in[q.pos1] += g[b] * q.w1 / roi.count;
            in[q.pos2] += g[b] * q.w2 / roi.count;
            in[q.pos3] += g[b] * q.w3 / roi.count;
            in[q.pos4] += g[b] * q.w4 / roi.count;
          }
      }
    }
  });
}

torch::Tensor roiAlignBackwardCpu(const torch::Tensor& grad, const torch::Tensor& rois, at::IntArrayRef inputShape,
                                  int64_t ph, int64_t pw, double spatialScale, int64_t samplingRatio, bool aligned) {
  const torch::Tensor g = grad.contiguous(), r = rois.contiguous();
  torch::Tensor out = torch::zeros(inputShape, g.options());
  const int64_t K = r.size(0), C = out.size(1), H = out.size(2), W = out.size(3);
  if (K == 0) return out;
  AT_DISPATCH_FLOATING_TYPES(g.scalar_type(), "roi_align_backward", [&] {
    backward<scalar_t>(g.data_ptr<scalar_t>(), r.data_ptr<scalar_t>(), out.data_ptr<scalar_t>(), K, C, H, W, ph, pw,
                       static_cast<scalar_t>(spatialScale), samplingRatio, aligned);
  });
  return out;
}

// The two kernels as one differentiable op: the gradient to the input only
// (none to the boxes, as torchvision's).
class RoiAlignFunction : public torch::autograd::Function<RoiAlignFunction> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& input,
                               const torch::Tensor& rois, int64_t ph, int64_t pw, double spatialScale,
                               int64_t samplingRatio, bool aligned) {
    ctx->save_for_backward({rois});
    ctx->saved_data["shape"] = input.sizes().vec();
    ctx->saved_data["ph"] = ph;
    ctx->saved_data["pw"] = pw;
    ctx->saved_data["scale"] = spatialScale;
    ctx->saved_data["sampling"] = samplingRatio;
    ctx->saved_data["aligned"] = aligned;
    return roiAlignForwardCpu(input, rois, ph, pw, spatialScale, samplingRatio, aligned);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const torch::Tensor rois = ctx->get_saved_variables()[0];
    const std::vector<int64_t> shape = ctx->saved_data["shape"].toIntVector();
    const torch::Tensor gradInput = roiAlignBackwardCpu(
        grads[0], rois, shape, ctx->saved_data["ph"].toInt(), ctx->saved_data["pw"].toInt(),
        ctx->saved_data["scale"].toDouble(), ctx->saved_data["sampling"].toInt(), ctx->saved_data["aligned"].toBool());
    return {gradInput,       torch::Tensor(), torch::Tensor(), torch::Tensor(),
            torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

torch::Tensor roiAlignCpu(const torch::Tensor& input, const torch::Tensor& rois, int64_t ph, int64_t pw,
                          double spatialScale, int64_t samplingRatio, bool aligned) {
  return RoiAlignFunction::apply(input, rois, ph, pw, spatialScale, samplingRatio, aligned);
}

torch::Tensor roiAlignForwardCpu(const torch::Tensor& input, const torch::Tensor& rois, int64_t ph, int64_t pw,
                                 double spatialScale, int64_t samplingRatio, bool aligned) {
  const torch::Tensor x = input.contiguous(), r = rois.contiguous();
  const int64_t K = r.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  torch::Tensor out = torch::zeros({K, C, ph, pw}, x.options());
  if (K == 0) return out;
  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "roi_align_forward", [&] {
    forward<scalar_t>(x.data_ptr<scalar_t>(), r.data_ptr<scalar_t>(), out.data_ptr<scalar_t>(), K, C, H, W, ph, pw,
                      static_cast<scalar_t>(spatialScale), samplingRatio, aligned);
  });
  return out;
}

}  // namespace studio::detection
