#include "studio/coco_mask.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

namespace studio {

Rle rleEncode(const uint8_t* mask, int64_t height, int64_t width) {
  Rle r{height, width, {}};
  uint32_t run = 0;
  bool value = false;
  for (int64_t x = 0; x < width; ++x)
    for (int64_t y = 0; y < height; ++y) {
      const bool v = mask[y * width + x] != 0;
      if (v != value) {
        r.counts.push_back(run);
        run = 0;
        value = v;
      }
      ++run;
    }
  r.counts.push_back(run);
  return r;
}

std::vector<uint8_t> rleDecode(const Rle& r) {
  std::vector<uint8_t> out(static_cast<size_t>(r.height * r.width), 0);
  int64_t at = 0;  // column-major position
  bool value = false;
  for (uint32_t run : r.counts) {
    for (uint32_t k = 0; k < run && at < r.height * r.width; ++k, ++at)
      if (value) out[static_cast<size_t>((at % r.height) * r.width + at / r.height)] = 1;
    value = !value;
  }
  return out;
}

Rle rleFromPolygon(const std::vector<double>& xy, int64_t h, int64_t w) {
  // The edges traced at 5x between the rounded vertices, every step of the
  // longer axis a point (pycocotools' rleFrPoly).
  constexpr double scale = 5;
  const size_t k = xy.size() / 2;
  std::vector<int64_t> x(k + 1), y(k + 1);
  for (size_t j = 0; j < k; ++j) {
    x[j] = static_cast<int64_t>(scale * xy[2 * j] + .5);
    y[j] = static_cast<int64_t>(scale * xy[2 * j + 1] + .5);
  }
  x[k] = x[0];
  y[k] = y[0];
  std::vector<int64_t> u, v;
  for (size_t j = 0; j < k; ++j) {
    int64_t xs = x[j], xe = x[j + 1], ys = y[j], ye = y[j + 1];
    const int64_t dx = std::llabs(xe - xs), dy = std::llabs(ys - ye);
    const bool flip = (dx >= dy && xs > xe) || (dx < dy && ys > ye);
    if (flip) {
      std::swap(xs, xe);
      std::swap(ys, ye);
    }
    // A repeated vertex (an edge of no length) is its one point: no slope
    // (pycocotools divides 0 by 0 there and casts the NaN, which C leaves
    // undefined; the point's row is never read, its column being its
    // neighbours').
    const double s = dx >= dy ? (dx > 0 ? static_cast<double>(ye - ys) / static_cast<double>(dx) : 0.0)
                              : static_cast<double>(xe - xs) / static_cast<double>(dy);
    if (dx >= dy) {
      for (int64_t d = 0; d <= dx; ++d) {
        const int64_t t = flip ? dx - d : d;
        u.push_back(t + xs);
        v.push_back(static_cast<int64_t>(static_cast<double>(ys) + s * static_cast<double>(t) + .5));
      }
    } else {
      for (int64_t d = 0; d <= dy; ++d) {
        const int64_t t = flip ? dy - d : d;
        v.push_back(t + ys);
        u.push_back(static_cast<int64_t>(static_cast<double>(xs) + s * static_cast<double>(t) + .5));
      }
    }
  }
  // Where the boundary crosses a column's centre: the first row inside.
  std::vector<uint64_t> a;
  for (size_t j = 1; j < u.size(); ++j) {
    if (u[j] == u[j - 1]) continue;
    double xd = static_cast<double>(u[j] < u[j - 1] ? u[j] : u[j] - 1);
    xd = (xd + .5) / scale - .5;
    if (std::floor(xd) != xd || xd < 0 || xd > static_cast<double>(w - 1)) continue;
    double yd = static_cast<double>(v[j] < v[j - 1] ? v[j] : v[j - 1]);
    yd = (yd + .5) / scale - .5;
    yd = yd < 0 ? 0 : yd > static_cast<double>(h) ? static_cast<double>(h) : yd;
    yd = std::ceil(yd);
    a.push_back(static_cast<uint64_t>(static_cast<int64_t>(xd) * h + static_cast<int64_t>(yd)));
  }
  a.push_back(static_cast<uint64_t>(h * w));
  std::sort(a.begin(), a.end());
  uint64_t previous = 0;
  for (auto& value : a) {
    const uint64_t t = value;
    value -= previous;
    previous = t;
  }
  // Crossings at the same place cancel: an empty run joins its neighbours.
  Rle r{h, w, {}};
  size_t j = 0;
  r.counts.push_back(static_cast<uint32_t>(a[j++]));
  while (j < a.size()) {
    if (a[j] > 0) {
      r.counts.push_back(static_cast<uint32_t>(a[j++]));
    } else {
      ++j;
      if (j < a.size()) r.counts.back() += static_cast<uint32_t>(a[j++]);
    }
  }
  return r;
}

Rle rleFromBox(const std::array<double, 4>& b, int64_t h, int64_t w) {
  const double xs = b[0], ys = b[1], xe = b[0] + b[2], ye = b[1] + b[3];
  return rleFromPolygon({xs, ys, xs, ye, xe, ye, xe, ys}, h, w);
}

Rle rleMerge(const std::vector<Rle>& rles, bool intersect) {
  if (rles.empty()) return {};
  if (rles.size() == 1) return rles.front();
  const int64_t h = rles.front().height, w = rles.front().width;
  std::vector<uint8_t> merged = rleDecode(rles.front());
  for (size_t i = 1; i < rles.size(); ++i) {
    if (rles[i].height != h || rles[i].width != w) return {};
    const std::vector<uint8_t> other = rleDecode(rles[i]);
    for (size_t p = 0; p < merged.size(); ++p) merged[p] = intersect ? (merged[p] & other[p]) : (merged[p] | other[p]);
  }
  return rleEncode(merged.data(), h, w);
}

uint64_t rleArea(const Rle& r) {
  uint64_t area = 0;
  for (size_t j = 1; j < r.counts.size(); j += 2) area += r.counts[j];
  return area;
}

std::array<double, 4> rleBox(const Rle& r) {
  const size_t m = r.counts.size() & ~size_t{1};  // a last run of zeros says nothing
  if (m == 0) return {0, 0, 0, 0};
  const auto h = static_cast<uint64_t>(r.height);
  uint64_t xs = static_cast<uint64_t>(r.width), ys = h, xe = 0, ye = 0, at = 0, xp = 0;
  for (size_t j = 0; j < m; ++j) {
    at += r.counts[j];
    const uint64_t t = at - j % 2, y = t % h, x = (t - y) / h;
    if (j % 2 == 0)
      xp = x;
    else if (xp < x) {  // a run of ones across columns spans every row
      ys = 0;
      ye = h - 1;
    }
    xs = std::min(xs, x);
    xe = std::max(xe, x);
    ys = std::min(ys, y);
    ye = std::max(ye, y);
  }
  return {static_cast<double>(xs), static_cast<double>(ys), static_cast<double>(xe - xs + 1),
          static_cast<double>(ye - ys + 1)};
}

double rleIou(const Rle& d, const Rle& g, bool crowd) {
  if (d.height != g.height || d.width != g.width) return -1;
  // Both runs walked together: the pixels where either (union) and both (intersection) are set.
  uint64_t inter = 0, uni = 0;
  size_t a = 0, b = 0;
  uint64_t ca = d.counts.empty() ? 0 : d.counts[0], cb = g.counts.empty() ? 0 : g.counts[0];
  bool va = false, vb = false;
  const uint64_t total = static_cast<uint64_t>(d.height * d.width);
  uint64_t done = 0;
  while (done < total) {
    while (ca == 0 && a + 1 < d.counts.size()) ca = d.counts[++a], va = !va;
    while (cb == 0 && b + 1 < g.counts.size()) cb = g.counts[++b], vb = !vb;
    if (ca == 0 || cb == 0) break;  // runs that end early
    const uint64_t c = std::min(ca, cb);
    if (va || vb) uni += c;
    if (va && vb) inter += c;
    ca -= c;
    cb -= c;
    done += c;
  }
  if (inter == 0) return 0;
  const uint64_t over = crowd ? rleArea(d) : uni;
  return static_cast<double>(inter) / static_cast<double>(over);
}

std::string rleToString(const Rle& r) {
  std::string s;
  for (size_t i = 0; i < r.counts.size(); ++i) {
    int64_t x = r.counts[i];
    if (i > 2) x -= static_cast<int64_t>(r.counts[i - 2]);
    bool more = true;
    while (more) {
      int64_t c = x & 0x1f;
      x >>= 5;
      more = (c & 0x10) ? x != -1 : x != 0;
      if (more) c |= 0x20;
      s.push_back(static_cast<char>(c + 48));
    }
  }
  return s;
}

Rle rleFromString(const std::string& s, int64_t h, int64_t w) {
  Rle r{h, w, {}};
  size_t p = 0;
  while (p < s.size()) {
    int64_t x = 0;
    int k = 0;
    bool more = true;
    while (more) {
      if (p >= s.size()) throw std::invalid_argument("its RLE counts end in the middle of a number");
      const int64_t c = static_cast<unsigned char>(s[p]) - 48;
      if (c < 0 || c > 63)
        throw std::invalid_argument("its RLE counts hold a character that is not COCO's ('" + std::string(1, s[p]) +
                                    "')");
      if (k > 6) throw std::invalid_argument("its RLE counts hold a number too large");  // 7 chunks: 35 bits
      x |= (c & 0x1f) << (5 * k);
      more = (c & 0x20) != 0;
      ++p;
      ++k;
      if (!more && (c & 0x10)) x |= static_cast<int64_t>(-1) * (int64_t{1} << (5 * k));
    }
    if (r.counts.size() > 2) x += r.counts[r.counts.size() - 2];
    if (x < 0 || x > static_cast<int64_t>(UINT32_MAX))
      throw std::invalid_argument("its RLE counts hold a run below 0 or past 2^32 pixels");
    r.counts.push_back(static_cast<uint32_t>(x));
  }
  uint64_t total = 0;
  for (uint32_t c : r.counts) total += c;
  if (total != static_cast<uint64_t>(h * w))
    throw std::invalid_argument("its RLE counts cover " + std::to_string(total) + " pixels, not the " +
                                std::to_string(h) + "x" + std::to_string(w) + " = " + std::to_string(h * w) +
                                " of its size");
  return r;
}

}  // namespace studio
