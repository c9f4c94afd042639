#include "detection/roi_align_cpu.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace studio::detection {
namespace {

template <typename T>
struct Corners {
  int64_t pos1 = 0, pos2 = 0, pos3 = 0, pos4 = 0;
  T w1 = 0, w2 = 0, w3 = 0, w4 = 0;
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
        }
      }
}

template <typename T>
void forward(const T* input, const T* rois, T* output, int64_t K, int64_t C, int64_t H, int64_t W, int64_t ph,
             int64_t pw, T scale, int64_t sampling, bool aligned) {
  at::parallel_for(0, K, 1, [&](int64_t begin, int64_t end) {
    std::vector<Corners<T>> pre;
    for (int64_t n = begin; n < end; ++n) {
      const T* r = rois + n * 5;
      const auto batch = static_cast<int64_t>(r[0]);
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
      const T count = static_cast<T>(std::max<int64_t>(gridH * gridW, 1));
      pre.assign(static_cast<size_t>(gridH * gridW * ph * pw), Corners<T>{});
      corners(H, W, ph, pw, startH, startW, binH, binW, gridH, gridW, pre);
      for (int64_t c = 0; c < C; ++c) {
        const T* in = input + (batch * C + c) * H * W;
        T* out = output + (n * C + c) * ph * pw;
        size_t k = 0;
        for (int64_t b = 0; b < ph * pw; ++b) {
          T value = 0.;
          for (int64_t s = 0; s < gridH * gridW; ++s) {
            const Corners<T>& q = pre[k++];
            value += q.w1 * in[q.pos1] + q.w2 * in[q.pos2] + q.w3 * in[q.pos3] + q.w4 * in[q.pos4];
          }
          out[b] = value / count;
        }
      }
    }
  });
}

}  // namespace

torch::Tensor roiAlignForwardCpu(const torch::Tensor& input, const torch::Tensor& rois, int64_t ph, int64_t pw,
                                 double spatialScale, int64_t samplingRatio, bool aligned) {
  const torch::Tensor x = input.contiguous(), r = rois.contiguous();
  const int64_t K = r.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  torch::Tensor out = torch::zeros({K, C, ph, pw}, x.options());
  if (K == 0) return out;
  if (x.scalar_type() == torch::kDouble)
    forward<double>(x.data_ptr<double>(), r.data_ptr<double>(), out.data_ptr<double>(), K, C, H, W, ph, pw,
                    spatialScale, samplingRatio, aligned);
  else
    forward<float>(x.data_ptr<float>(), r.data_ptr<float>(), out.data_ptr<float>(), K, C, H, W, ph, pw,
                   static_cast<float>(spatialScale), samplingRatio, aligned);
  return out;
}

}  // namespace studio::detection
