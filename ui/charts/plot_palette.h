#pragma once
// Colours a QCustomPlot from a palette: background, axes, grid, legend and a
// title element in row 0, so every chart follows the light or dark theme.
// Thread: the UI thread.

#include <QColor>
#include <QPalette>

class QCustomPlot;

namespace studio::ui {

void applyPlotPalette(QCustomPlot* plot, const QPalette& palette);
// The legend in a row of its own under the axes, its entries side by side:
// it never covers a curve, a bar or a label drawn in the plot.
void placeLegendBelow(QCustomPlot* plot);
// The i-th run's (or series') colour, Okabe-Ito's eight in turn:
// distinguishable with common colour-vision deficiencies, and on light and
// dark backgrounds. The curves and the Evaluation tab's comparison share it.
QColor runColour(int i);

}  // namespace studio::ui
