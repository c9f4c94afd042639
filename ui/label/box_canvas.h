#pragma once
// The Label tab's large view for boxes: the image at a scale (fit x zoom),
// its boxes in their class's colour, a run's proposals dashed until
// accepted. A drag on empty ground draws a box of the current class; a
// drag inside a box moves it; a drag on a box's edge or corner resizes it.
// Boxes snap to whole pixels of the image and stay inside it. Each gesture
// ends in one edited() with the image's new boxes.
// Thread: UI thread.

#include <QImage>
#include <QWidget>

#include <optional>
#include <vector>

#include "studio/box_label_store.h"

namespace studio::ui {

class BoxCanvas : public QWidget {
  Q_OBJECT

 public:
  explicit BoxCanvas(QWidget* parent = nullptr);

  // The image and its boxes (selection cleared); proposals drawn dashed.
  void show(const QImage& image, const ImageBoxes& boxes, const std::vector<LabelBox>& proposals);
  void setBoxes(const ImageBoxes& boxes);
  void setScale(double scale);  // widget pixels per image pixel
  double scale() const { return m_scale; }
  // The classes by category id's position (colour and name); the current
  // one draws new boxes.
  void setCategories(const std::vector<BoxCategory>& categories);
  void setCurrentCategory(int64_t id) { m_current = id; }
  int64_t currentCategory() const { return m_current; }
  int selected() const { return m_selected; }  // -1: none
  const ImageBoxes& boxes() const { return m_boxes; }
  // The selected box's class, or the selected box removed; false without one.
  bool setSelectedCategory(int64_t id);
  bool removeSelected();

 Q_SIGNALS:
  void edited(const ImageBoxes& boxes);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;

 private:
  enum Edge { Left = 1, Top = 2, Right = 4, Bottom = 8 };
  QPointF toImage(const QPointF& p) const;
  QRectF toWidget(const LabelBox& b) const;
  int edgesAt(const LabelBox& b, const QPointF& p) const;  // Edge bits within reach of p
  LabelBox clamped(double x1, double y1, double x2, double y2, const LabelBox& like) const;

  QImage m_image;
  ImageBoxes m_boxes;
  std::vector<LabelBox> m_proposals;
  std::vector<BoxCategory> m_categories;
  int64_t m_current = 1;
  double m_scale = 1;
  int m_selected = -1;
  struct Drag {
    enum Kind { Draw, Move, Resize } kind = Draw;
    QPointF from;    // in image pixels
    LabelBox start;  // the box as it was
    int edges = 0;   // Resize: which
  };
  std::optional<Drag> m_drag;
};

}  // namespace studio::ui
