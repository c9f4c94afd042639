#include "ui/common/mask_drawing.h"

#include <vector>

#include "ui/common/box_drawing.h"

namespace studio::ui {

QImage overlayMask(const QImage& image, const Mask& mask, size_t classes, double opacity, int size) {
  QImage out = image.convertToFormat(QImage::Format_RGB32);
  if (out.height() == mask.height && out.width() == mask.width) {
    std::vector<QColor> colours;
    for (size_t k = 0; k < classes; ++k) colours.push_back(classColour(static_cast<int64_t>(k), classes));
    const double keep = 1.0 - opacity;
    for (int y = 0; y < out.height(); ++y) {
      auto* row = reinterpret_cast<QRgb*>(out.scanLine(y));
      const uint8_t* values = mask.values.data() + static_cast<size_t>(y) * static_cast<size_t>(mask.width);
      for (int x = 0; x < out.width(); ++x) {
        const size_t k = values[x];
        if (k == 0 || k >= classes) continue;
        const QColor& c = colours[k];
        row[x] = qRgb(static_cast<int>(qRed(row[x]) * keep + c.red() * opacity),
                      static_cast<int>(qGreen(row[x]) * keep + c.green() * opacity),
                      static_cast<int>(qBlue(row[x]) * keep + c.blue() * opacity));
      }
    }
  }
  return size > 0 ? out.scaled(size, size, Qt::KeepAspectRatio, Qt::SmoothTransformation) : out;
}

QImage overlayInstances(const QImage& image, const std::vector<std::pair<const Rle*, int64_t>>& masks, size_t classes,
                        double opacity) {
  QImage out = image.convertToFormat(QImage::Format_RGB32);
  const double keep = 1.0 - opacity;
  for (const auto& [rle, label] : masks) {
    if (rle->height != out.height() || rle->width != out.width()) continue;
    const QColor c = classColour(label, classes);
    const std::vector<uint8_t> inside = rleDecode(*rle);
    for (int y = 0; y < out.height(); ++y) {
      auto* row = reinterpret_cast<QRgb*>(out.scanLine(y));
      const uint8_t* values = inside.data() + static_cast<size_t>(y) * static_cast<size_t>(out.width());
      for (int x = 0; x < out.width(); ++x)
        if (values[x])
          row[x] = qRgb(static_cast<int>(qRed(row[x]) * keep + c.red() * opacity),
                        static_cast<int>(qGreen(row[x]) * keep + c.green() * opacity),
                        static_cast<int>(qBlue(row[x]) * keep + c.blue() * opacity));
    }
  }
  return out;
}

QImage overlayFoundMasks(const QImage& image, const std::vector<PredictedBox>& boxes, double minScore, size_t classes,
                         double opacity) {
  std::vector<std::pair<const Rle*, int64_t>> drawn;
  for (const auto& b : boxes)
    if (b.score >= minScore && b.mask) drawn.emplace_back(&*b.mask, b.label);
  return drawn.empty() ? image : overlayInstances(image, drawn, classes, opacity);
}

}  // namespace studio::ui
