#include "studio/coco_segmentation.h"

#include <nlohmann/json.hpp>

#include <stdexcept>

#include "studio/errors.h"

namespace studio {

namespace {

std::string sizeText(int64_t h, int64_t w) { return std::to_string(h) + "x" + std::to_string(w); }

}  // namespace

Rle cocoSegmentation(const nlohmann::json& s, int64_t h, int64_t w, const std::string& where) {
  if (s.is_array()) {
    if (s.empty()) throw DataError(where + ": its segmentation has no polygon");
    std::vector<Rle> parts;
    for (size_t p = 0; p < s.size(); ++p) {
      const auto& poly = s[p];
      if (!poly.is_array() || poly.size() < 6 || poly.size() % 2 != 0)
        throw DataError(where + ": its segmentation's polygon " + std::to_string(p + 1) + " has " +
                        (poly.is_array() ? std::to_string(poly.size()) + " numbers" : std::string("no list")) +
                        ": a polygon needs at least three points (x, y pairs)");
      std::vector<double> xy;
      for (const auto& v : poly) {
        if (!v.is_number())
          throw DataError(where + ": its segmentation's polygon " + std::to_string(p + 1) + " holds " + v.dump() +
                          ", not a number");
        // A point a whole image's size past its edges is a mistake (and would
        // be traced point by point at 5x): refused.
        const double x = v.get<double>(), side = static_cast<double>(xy.size() % 2 == 0 ? w : h);
        if (!(x >= -side && x <= 2 * side))
          throw DataError(where + ": its segmentation's polygon " + std::to_string(p + 1) + " has the " +
                          (xy.size() % 2 == 0 ? "x " : "y ") + v.dump() + ", far outside its " + sizeText(h, w) +
                          " image");
        xy.push_back(x);
      }
      parts.push_back(rleFromPolygon(xy, h, w));
    }
    return rleMerge(parts);
  }
  if (!s.is_object() || !s.contains("counts") || !s.contains("size"))
    throw DataError(where + ": its segmentation is neither polygons nor an RLE ({\"size\", \"counts\"})");
  const auto& size = s["size"];
  if (!size.is_array() || size.size() != 2 || !size[0].is_number_integer() || !size[1].is_number_integer())
    throw DataError(where + ": its RLE's size is not [height, width]");
  const int64_t rh = size[0].get<int64_t>(), rw = size[1].get<int64_t>();
  if (rh != h || rw != w)
    throw DataError(where + ": its RLE is " + sizeText(rh, rw) + " but its image is " + sizeText(h, w) +
                    " (height x width)");
  const auto& counts = s["counts"];
  if (counts.is_string()) {
    try {
      return rleFromString(counts.get<std::string>(), h, w);
    } catch (const std::invalid_argument& e) {
      throw DataError(where + ": " + e.what());
    }
  }
  if (!counts.is_array()) throw DataError(where + ": its RLE's counts are neither text nor a list of runs");
  Rle r{h, w, {}};
  uint64_t total = 0;
  for (const auto& c : counts) {
    if (!c.is_number_unsigned() || c.get<uint64_t>() > UINT32_MAX)
      throw DataError(where + ": its RLE's counts hold " + c.dump() + ", not a run of pixels");
    r.counts.push_back(c.get<uint32_t>());
    total += r.counts.back();
  }
  if (total != static_cast<uint64_t>(h * w))
    throw DataError(where + ": its RLE's counts cover " + std::to_string(total) + " pixels, not the " +
                    std::to_string(h * w) + " of its " + sizeText(h, w) + " image");
  return r;
}

Mask semanticMaskOf(const std::vector<std::pair<Rle, uint8_t>>& instances, int64_t h, int64_t w) {
  Mask m;
  m.height = h;
  m.width = w;
  m.values.assign(static_cast<size_t>(h * w), 0);
  std::vector<uint8_t> covered(static_cast<size_t>(h * w), 0);
  for (const auto& [rle, label] : instances) {
    const std::vector<uint8_t> pixels = rleDecode(rle);
    for (size_t i = 0; i < pixels.size(); ++i) {
      if (!pixels[i]) continue;
      if (covered[i] < 2) ++covered[i];
      if (label > m.values[i]) m.values[i] = label;  // the references' max over the instances
    }
  }
  for (size_t i = 0; i < covered.size(); ++i)
    if (covered[i] > 1) m.values[i] = 255;  // two instances: ignored
  return m;
}

}  // namespace studio
