#pragma once
// What the data settings select, for the window to show before a run:
// the description (classes, counts per split, input shape, where each split
// comes from), a few images of each class (or the first rows of a table),
// and the error that stops the data from being read, with the setting it
// belongs to. Widget-free: made on a worker thread.
// Thread: makeDataPreview on any thread; the result is a value.

#include <QImage>
#include <QString>
#include <QStringList>

#include <vector>

#include "studio/dataset_info.h"
#include "studio/image_file.h"
#include "studio/train_config.h"

namespace studio::ui {

inline constexpr int kBoxedSampleSize = 112;

struct DataPreview {
  bool ok = false;
  DatasetDescription description;
  // Images: up to samplesPerClass training images of each class; a
  // detector's data: images with a box of the class, every box of each drawn
  // (kBoxedSampleSize pixels at most).
  std::vector<std::vector<QImage>> samples;
  // Tables: the header and the first rows as written.
  QStringList columns;
  std::vector<QStringList> rows;
  QString error;  // the DataError's message
  QString field;  // the setting it is about ("data.root", "data.label_column", ...)
};

// An engine image (8-bit gray or RGB, row-major) as a QImage owning its
// pixels, and back (other formats become RGB).
QImage toQImage(const Image& img);
Image toImage(const QImage& img);

DataPreview makeDataPreview(const TrainConfig& config, int samplesPerClass = 6);

// The part of the settings the preview depends on (to know when to redo it).
QString dataPreviewKey(const TrainConfig& config);

}  // namespace studio::ui
