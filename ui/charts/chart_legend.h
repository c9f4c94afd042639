#pragma once
// A chart's legend as a list of entries: each curve under its own name, or,
// with several runs overlaid, one entry per run under the run's name (its
// curves differ by style, as with one run), so two runs compared take two
// entries instead of six (issue 40, item 9).
// Thread: UI thread.

#include <QString>

#include <vector>

class QCPAbstractLegendItem;
class QCPAbstractPlottable;
class QCPLegend;

namespace studio::ui {

struct LegendEntry {
  QCPAbstractPlottable* plottable = nullptr;  // its icon, and what a click toggles
  QString text;                               // empty: the plottable's name
  bool operator==(const LegendEntry&) const = default;
};

// Lists `entries` in the legend, in order; nothing changes when they are
// those already listed.
void listLegend(QCPLegend* legend, const std::vector<LegendEntry>& entries);

// The text an entry shows.
QString legendText(QCPAbstractLegendItem* item);

}  // namespace studio::ui
