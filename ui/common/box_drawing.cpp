#include "ui/common/box_drawing.h"

#include <QFontMetrics>
#include <QPainter>

#include <algorithm>

namespace studio::ui {

QColor classColour(int64_t label, size_t classes) {
  const double hue = static_cast<double>(label) / static_cast<double>(std::max<size_t>(classes, 1));
  return QColor::fromHsvF(static_cast<float>(hue), 0.9f, 1.0f);
}

QImage drawBoxes(const QImage& image, const std::vector<DrawnBox>& boxes, const std::vector<std::string>& classes,
                 int size) {
  if (image.isNull()) return image;
  const double scale = size > 0 ? std::min(1.0 * size / image.width(), 1.0 * size / image.height()) : 1.0;
  QImage out = image.convertToFormat(QImage::Format_RGB32)
                   .scaled(std::max(1, static_cast<int>(image.width() * scale)),
                           std::max(1, static_cast<int>(image.height() * scale)), Qt::IgnoreAspectRatio,
                           Qt::SmoothTransformation);
  QPainter paint(&out);
  QFont font = paint.font();
  font.setPixelSize(11);
  paint.setFont(font);
  for (const auto& b : boxes) {
    const QColor colour = classColour(b.label, classes.size());
    const QRectF box(b.x * scale, b.y * scale, b.width * scale, b.height * scale);
    paint.setPen(QPen(colour, 2));
    paint.setBrush(Qt::NoBrush);
    paint.drawRect(box);
    const QString name = b.label >= 0 && static_cast<size_t>(b.label) < classes.size()
                             ? QString::fromStdString(classes[static_cast<size_t>(b.label)])
                             : QString::number(b.label);
    const QString text = b.score >= 0 ? QString("%1 %2").arg(name).arg(b.score, 0, 'f', 2) : name;
    const QRectF tag(box.left(), std::max(0.0, box.top() - 14), paint.fontMetrics().horizontalAdvance(text) + 6, 14);
    paint.fillRect(tag, colour);
    paint.setPen(Qt::black);
    paint.drawText(tag, Qt::AlignCenter, text);
  }
  return out;
}

}  // namespace studio::ui
