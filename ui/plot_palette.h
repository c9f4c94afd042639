#pragma once
// Colours a QCustomPlot from a palette: background, axes, grid, legend and a
// title element in row 0, so every chart follows the light or dark theme.
// Thread: the UI thread.

#include <QPalette>

class QCustomPlot;

namespace studio::ui {

void applyPlotPalette(QCustomPlot* plot, const QPalette& palette);

}  // namespace studio::ui
