#include "studio/yolo_masks.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <utility>

#include "data_files/decimal_number.h"
#include "studio/coco_mask.h"
#include "studio/coco_segmentation.h"
#include "studio/errors.h"

namespace studio {

std::vector<YoloPolygon> readYoloPolygons(const std::string& text, const std::string& path, int64_t h, int64_t w,
                                          int64_t classes) {
  std::vector<YoloPolygon> out;
  std::istringstream in(text);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    std::istringstream words(line);
    std::vector<std::string> parts;
    for (std::string word; words >> word;) parts.push_back(word);
    if (parts.empty()) continue;
    const std::string where = path + " line " + std::to_string(number);
    std::vector<double> values;
    for (const std::string& word : parts) {
      double v = 0;
      if (!finiteDecimal(word, v)) throw DataError(where + ": \"" + word + "\" is not a number");
      values.push_back(v);
    }
    if (values[0] != std::floor(values[0]) || values[0] < 0 || values[0] >= static_cast<double>(classes))
      throw DataError(where + ": class " + parts[0] + ", but there are " + std::to_string(classes) + " classes (0 to " +
                      std::to_string(classes - 1) + ")");
    YoloPolygon p;
    p.label = static_cast<int64_t>(values[0]);
    p.line = number;
    const size_t coordinates = values.size() - 1;
    if (coordinates < 6 || coordinates % 2 != 0)
      throw DataError(where + ": a polygon needs at least three points (x y pairs); it has " +
                      std::to_string(coordinates) + " numbers after its class" +
                      (coordinates == 4 ? " (\"class cx cy w h\" is a box, detection's label)" : ""));
    for (size_t i = 1; i < values.size(); ++i) {
      if (values[i] < 0 || values[i] > 1)
        throw DataError(where + ": " + parts[i] +
                        " is outside 0 to 1 (YOLO's points are fractions of the image's "
                        "width and height)");
      p.xy.push_back(values[i] * static_cast<double>(i % 2 == 1 ? w : h));
    }
    out.push_back(std::move(p));
  }
  return out;
}

Mask yoloSemanticMask(const std::vector<YoloPolygon>& polygons, int64_t h, int64_t w) {
  std::vector<std::pair<Rle, uint8_t>> instances;
  for (const YoloPolygon& p : polygons)
    instances.emplace_back(rleFromPolygon(p.xy, h, w), static_cast<uint8_t>(p.label + 1));
  return semanticMaskOf(instances, h, w);
}

BoxAnnotations readYoloInstances(const std::string& dataYaml, const std::string& root) {
  BoxAnnotations out = readYoloImages(dataYaml, root);
  const auto classes = static_cast<int64_t>(out.categories.size());
  for (size_t k = 0; k < out.images.size(); ++k) {
    const AnnotatedImage& im = out.images[k];
    const std::string labels = yoloLabelFile(im.file);
    const std::vector<YoloPolygon> polygons =
        readYoloPolygons(readYoloLabelText(labels, im.file), labels, im.height, im.width, classes);
    if (static_cast<int64_t>(polygons.size()) > kMaxBoxesPerImage)
      throw DataError(labels + " holds " + std::to_string(polygons.size()) + " objects; at most " +
                      std::to_string(kMaxBoxesPerImage) + " an image are read");
    for (const YoloPolygon& p : polygons) {
      double x0 = std::numeric_limits<double>::infinity(), y0 = x0, x1 = -x0, y1 = -x0;
      for (size_t i = 0; i + 1 < p.xy.size(); i += 2) {
        x0 = std::min(x0, p.xy[i]);
        x1 = std::max(x1, p.xy[i]);
        y0 = std::min(y0, p.xy[i + 1]);
        y1 = std::max(y1, p.xy[i + 1]);
      }
      if (!(x1 > x0 && y1 > y0))
        throw DataError(labels + " line " + std::to_string(p.line) +
                        ": its polygon has no area (its points lie on a line)");
      out.masks.push_back(rleFromPolygon(p.xy, im.height, im.width));
      AnnotatedBox b;
      b.image = static_cast<int64_t>(k);
      b.label = p.label;
      b.x = x0;
      b.y = y0;
      b.w = x1 - x0;
      b.h = y1 - y0;
      b.area = static_cast<double>(rleArea(out.masks.back()));
      out.boxes.push_back(b);
    }
  }
  return out;
}

}  // namespace studio
