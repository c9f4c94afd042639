#pragma once
// Boxes drawn over an image, as the Data tab's samples, the Predict tab and
// the Evaluation tab show a detector's data and answers: the image scaled to
// fit a square of `size` pixels, each box in its class's colour (a hue per
// class), labelled with its class and, when it has one, its score.
// Thread: any (QImage and QPainter on a QImage).

#include <QColor>
#include <QImage>

#include <cstdint>
#include <string>
#include <vector>

namespace studio::ui {

struct DrawnBox {
  double x = 0, y = 0, width = 0, height = 0;  // the image's pixels
  int64_t label = 0;                           // into the classes
  double score = -1;                           // -1: a true box, drawn without a score
};

QColor classColour(int64_t label, size_t classes);

// size 0: at the image's own size.
QImage drawBoxes(const QImage& image, const std::vector<DrawnBox>& boxes, const std::vector<std::string>& classes,
                 int size);

}  // namespace studio::ui
