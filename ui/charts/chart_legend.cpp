#include "ui/charts/chart_legend.h"

#include <qcustomplot.h>

namespace studio::ui {

namespace {

// A plottable's entry under another text (a run's name for its curves).
class NamedLegendItem : public QCPPlottableLegendItem {
 public:
  NamedLegendItem(QCPLegend* parent, QCPAbstractPlottable* plottable, QString text)
      : QCPPlottableLegendItem(parent, plottable), m_text(std::move(text)) {}
  const QString& text() const { return m_text; }

 protected:
  // As QCPPlottableLegendItem draws and measures, with m_text for the name.
  void draw(QCPPainter* painter) override {
    if (!mPlottable) return;
    painter->setFont(getFont());
    painter->setPen(QPen(getTextColor()));
    const QSize icon = mParentLegend->iconSize();
    const QRect textRect = painter->fontMetrics().boundingRect(0, 0, 0, icon.height(), Qt::TextDontClip, m_text);
    const QRect iconRect(mRect.topLeft(), icon);
    painter->drawText(mRect.x() + icon.width() + mParentLegend->iconTextPadding(), mRect.y(), textRect.width(),
                      std::max(textRect.height(), icon.height()), Qt::TextDontClip, m_text);
    // As QCPGraph draws its icon (drawLegendIcon is not ours to call): a
    // line in its pen, and its scatter shape in the middle.
    auto* graph = qobject_cast<QCPGraph*>(mPlottable);
    if (!graph) return;
    painter->save();
    painter->setClipRect(iconRect, Qt::IntersectClip);
    painter->setPen(graph->pen());
    const double y = iconRect.center().y() + 0.5;
    painter->drawLine(QLineF(iconRect.left(), y, iconRect.right() + 1, y));
    if (!graph->scatterStyle().isNone()) {
      graph->scatterStyle().applyTo(painter, graph->pen());
      graph->scatterStyle().drawShape(painter, QRectF(iconRect).center());
    }
    painter->restore();
  }
  QSize minimumOuterSizeHint() const override {
    if (!mPlottable) return {};
    const QSize icon = mParentLegend->iconSize();
    const QRect textRect = QFontMetrics(getFont()).boundingRect(0, 0, 0, icon.height(), Qt::TextDontClip, m_text);
    return {icon.width() + mParentLegend->iconTextPadding() + textRect.width() + mMargins.left() + mMargins.right(),
            std::max(textRect.height(), icon.height()) + mMargins.top() + mMargins.bottom()};
  }

 private:
  QString m_text;
};

std::vector<LegendEntry> listed(QCPLegend* legend) {
  std::vector<LegendEntry> out;
  for (int i = 0; i < legend->itemCount(); ++i) {
    auto* item = qobject_cast<QCPPlottableLegendItem*>(legend->item(i));
    if (!item) continue;
    auto* named = dynamic_cast<NamedLegendItem*>(item);
    out.push_back({item->plottable(), named ? named->text() : QString()});
  }
  return out;
}

}  // namespace

void listLegend(QCPLegend* legend, const std::vector<LegendEntry>& entries) {
  if (listed(legend) == entries) return;
  legend->clearItems();
  for (const LegendEntry& e : entries)
    legend->addItem(e.text.isEmpty() ? new QCPPlottableLegendItem(legend, e.plottable)
                                     : new NamedLegendItem(legend, e.plottable, e.text));
}

QString legendText(QCPAbstractLegendItem* item) {
  if (auto* named = dynamic_cast<NamedLegendItem*>(item)) return named->text();
  if (auto* plain = qobject_cast<QCPPlottableLegendItem*>(item)) return plain->plottable()->name();
  return {};
}

}  // namespace studio::ui
