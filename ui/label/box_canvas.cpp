#include "ui/label/box_canvas.h"

#include <QMouseEvent>
#include <QPainter>

#include <algorithm>
#include <cmath>

#include "ui/common/box_drawing.h"

namespace studio::ui {
namespace {

constexpr double kReach = 6;  // widget pixels from an edge that grab it

}  // namespace

BoxCanvas::BoxCanvas(QWidget* parent) : QWidget(parent) {
  setMouseTracking(false);
  setFocusPolicy(Qt::NoFocus);
}

void BoxCanvas::show(const QImage& image, const ImageBoxes& boxes, const std::vector<LabelBox>& proposals) {
  m_image = image;
  m_boxes = boxes;
  m_proposals = proposals;
  m_selected = -1;
  m_drag.reset();
  setScale(m_scale);
}

void BoxCanvas::setBoxes(const ImageBoxes& boxes) {
  m_boxes = boxes;
  if (m_selected >= static_cast<int>(m_boxes.boxes.size())) m_selected = -1;
  update();
}

void BoxCanvas::setScale(double scale) {
  m_scale = scale;
  setFixedSize(std::max(1, static_cast<int>(std::lround(m_image.width() * m_scale))),
               std::max(1, static_cast<int>(std::lround(m_image.height() * m_scale))));
  update();
}

void BoxCanvas::setCategories(const std::vector<BoxCategory>& categories) {
  m_categories = categories;
  update();
}

QPointF BoxCanvas::toImage(const QPointF& p) const { return p / m_scale; }

QRectF BoxCanvas::toWidget(const LabelBox& b) const {
  return {b.x * m_scale, b.y * m_scale, b.width * m_scale, b.height * m_scale};
}

int BoxCanvas::edgesAt(const LabelBox& b, const QPointF& p) const {
  const QRectF r = toWidget(b);
  if (p.x() < r.left() - kReach || p.x() > r.right() + kReach || p.y() < r.top() - kReach ||
      p.y() > r.bottom() + kReach)
    return 0;
  int edges = 0;
  if (std::abs(p.x() - r.left()) <= kReach) edges |= Left;
  if (std::abs(p.x() - r.right()) <= kReach) edges |= Right;
  if (std::abs(p.y() - r.top()) <= kReach) edges |= Top;
  if (std::abs(p.y() - r.bottom()) <= kReach) edges |= Bottom;
  return edges;
}

LabelBox BoxCanvas::clamped(double x1, double y1, double x2, double y2, const LabelBox& like) const {
  const double w = static_cast<double>(m_image.width()), h = static_cast<double>(m_image.height());
  auto snap = [](double v, double hi) { return std::clamp(std::round(v), 0.0, hi); };
  x1 = snap(x1, w);
  x2 = snap(x2, w);
  y1 = snap(y1, h);
  y2 = snap(y2, h);
  LabelBox b = like;
  b.x = std::min(x1, x2);
  b.y = std::min(y1, y2);
  b.width = std::abs(x2 - x1);
  b.height = std::abs(y2 - y1);
  return b;
}

bool BoxCanvas::setSelectedCategory(int64_t id) {
  if (m_selected < 0) return false;
  LabelBox& b = m_boxes.boxes[static_cast<size_t>(m_selected)];
  if (b.category == id) return true;
  b.category = id;
  if (b.madeBy == "accepted") b.madeBy = "corrected";
  update();
  Q_EMIT edited(m_boxes);
  return true;
}

bool BoxCanvas::removeSelected() {
  if (m_selected < 0) return false;
  m_boxes.boxes.erase(m_boxes.boxes.begin() + m_selected);
  m_selected = -1;
  update();
  Q_EMIT edited(m_boxes);
  return true;
}

void BoxCanvas::paintEvent(QPaintEvent*) {
  QPainter p(this);
  if (m_image.isNull()) return;
  p.drawImage(rect(), m_image);
  const size_t classes = std::max<size_t>(m_categories.size(), 1);
  auto colourOf = [&](int64_t category) {
    const auto it =
        std::find_if(m_categories.begin(), m_categories.end(), [&](const BoxCategory& c) { return c.id == category; });
    return classColour(it == m_categories.end() ? 0 : it - m_categories.begin(), classes);
  };
  auto nameOf = [&](int64_t category) {
    for (const BoxCategory& c : m_categories)
      if (c.id == category) return QString::fromStdString(c.name);
    return QString::number(category);
  };
  for (const LabelBox& b : m_proposals) {
    p.setPen(QPen(colourOf(b.category), 2, Qt::DashLine));
    p.drawRect(toWidget(b));
    p.drawText(toWidget(b).topLeft() + QPointF(3, 12), nameOf(b.category) + "?");
  }
  for (size_t i = 0; i < m_boxes.boxes.size(); ++i) {
    const LabelBox& b = m_boxes.boxes[i];
    p.setPen(QPen(colourOf(b.category), static_cast<int>(i) == m_selected ? 3 : 2));
    p.drawRect(toWidget(b));
    p.drawText(toWidget(b).topLeft() + QPointF(3, 12), nameOf(b.category));
  }
}

void BoxCanvas::mousePressEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton || m_image.isNull()) return;
  const QPointF at = event->position();
  // The selected box's edges first, then any box's, then its inside.
  std::vector<int> order;
  if (m_selected >= 0) order.push_back(m_selected);
  for (int i = static_cast<int>(m_boxes.boxes.size()) - 1; i >= 0; --i)
    if (i != m_selected) order.push_back(i);
  for (int i : order) {
    const LabelBox& b = m_boxes.boxes[static_cast<size_t>(i)];
    if (const int edges = edgesAt(b, at)) {
      m_selected = i;
      m_drag = Drag{Drag::Resize, toImage(at), b, edges};
      update();
      return;
    }
  }
  for (int i : order)
    if (toWidget(m_boxes.boxes[static_cast<size_t>(i)]).contains(at)) {
      m_selected = i;
      m_drag = Drag{Drag::Move, toImage(at), m_boxes.boxes[static_cast<size_t>(i)], 0};
      update();
      return;
    }
  LabelBox fresh;
  fresh.category = m_current;
  const QPointF from = toImage(at);
  fresh.x = from.x();
  fresh.y = from.y();
  m_boxes.boxes.push_back(clamped(from.x(), from.y(), from.x(), from.y(), fresh));
  m_selected = static_cast<int>(m_boxes.boxes.size()) - 1;
  m_drag = Drag{Drag::Draw, from, m_boxes.boxes.back(), 0};
  update();
}

void BoxCanvas::mouseMoveEvent(QMouseEvent* event) {
  if (!m_drag || m_selected < 0) return;
  const QPointF to = toImage(event->position());
  const LabelBox& s = m_drag->start;
  LabelBox& b = m_boxes.boxes[static_cast<size_t>(m_selected)];
  double x1 = s.x, y1 = s.y, x2 = s.x + s.width, y2 = s.y + s.height;
  if (m_drag->kind == Drag::Draw) {
    b = clamped(m_drag->from.x(), m_drag->from.y(), to.x(), to.y(), s);
  } else if (m_drag->kind == Drag::Move) {
    const double w = static_cast<double>(m_image.width()), h = static_cast<double>(m_image.height());
    const double dx = std::clamp(std::round(to.x() - m_drag->from.x()), -x1, w - x2);
    const double dy = std::clamp(std::round(to.y() - m_drag->from.y()), -y1, h - y2);
    b = clamped(x1 + dx, y1 + dy, x2 + dx, y2 + dy, s);
  } else {
    if (m_drag->edges & Left) x1 = to.x();
    if (m_drag->edges & Right) x2 = to.x();
    if (m_drag->edges & Top) y1 = to.y();
    if (m_drag->edges & Bottom) y2 = to.y();
    b = clamped(x1, y1, x2, y2, s);
  }
  if (b.madeBy == "accepted" && !(b == s)) b.madeBy = "corrected";
  update();
}

void BoxCanvas::mouseReleaseEvent(QMouseEvent* event) {
  if (!m_drag || event->button() != Qt::LeftButton) return;
  if (m_selected < 0) {  // the boxes were replaced under the drag
    m_drag.reset();
    return;
  }
  mouseMoveEvent(event);
  const Drag drag = *m_drag;
  m_drag.reset();
  const LabelBox& b = m_boxes.boxes[static_cast<size_t>(m_selected)];
  if (drag.kind == Drag::Draw && (b.width < 1 || b.height < 1)) {  // a click, not a box: nothing drawn
    m_boxes.boxes.erase(m_boxes.boxes.begin() + m_selected);
    m_selected = -1;
    update();
    return;
  }
  if (drag.kind != Drag::Draw && b == drag.start) return;  // a click that selected
  if (b.width < 1 || b.height < 1) {                       // resized to nothing: as it was
    m_boxes.boxes[static_cast<size_t>(m_selected)] = drag.start;
    update();
    return;
  }
  Q_EMIT edited(m_boxes);
}

}  // namespace studio::ui
