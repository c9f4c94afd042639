#include "ui/data/data_preview.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "studio/csv_table.h"
#include "studio/idx_file.h"
#include "studio/image_file.h"
#include "studio/mask_file.h"
#include "studio/plan_masks.h"
#include "ui/common/box_drawing.h"
#include "ui/common/mask_drawing.h"

namespace studio::ui {

QImage toQImage(const Image& img) {
  const QImage::Format f = img.channels == 1 ? QImage::Format_Grayscale8 : QImage::Format_RGB888;
  QImage q(img.pixels.data(), static_cast<int>(img.width), static_cast<int>(img.height),
           static_cast<int>(img.width * img.channels), f);
  return q.copy();  // owns its pixels
}

Image toImage(const QImage& q) {
  const bool gray = q.format() == QImage::Format_Grayscale8;
  const QImage img = gray ? q : q.convertToFormat(QImage::Format_RGB888);
  Image out;
  out.height = img.height();
  out.width = img.width();
  out.channels = gray ? 1 : 3;
  for (int y = 0; y < img.height(); ++y) {
    const uchar* line = img.constScanLine(y);
    out.pixels.insert(out.pixels.end(), line, line + img.width() * out.channels);
  }
  return out;
}

namespace {

// Which setting a data error is about, from the setting it names.
QString fieldOf(const QString& message, const TrainConfig& c) {
  for (const char* f :
       {"data.label_column", "data.ignore_columns", "data.test_fraction", "data.val_fraction", "data.train_limit",
        "data.test_file", "data.train_file", "data.on_bad_file", "data.corrections", "data.cv_folds"})
    if (message.contains(f)) return f;
  if (c.data.format == DataFormat::csv) {
    if (!c.data.test_file.empty() && message.contains(QString::fromStdString(c.data.test_file)))
      return "data.test_file";
    if (!c.data.train_file.empty()) return "data.train_file";
  }
  return "data.root";
}

// A detection plan's samples: for each class, up to perClass training
// images with a box of it, every box of each drawn in its class's colour
// (an instance segmentation's masks under them, in the same colours).
std::vector<std::vector<QImage>> boxedSamples(const DataPlan& plan, int perClass) {
  const BoxAnnotations& a = plan.boxes;
  std::vector<std::vector<DrawnBox>> boxesOf(a.images.size());
  std::vector<std::vector<std::pair<const Rle*, int64_t>>> masksOf(a.images.size());
  for (size_t i = 0; i < a.boxes.size(); ++i) {
    const AnnotatedBox& b = a.boxes[i];
    if (b.crowd) continue;
    boxesOf[static_cast<size_t>(b.image)].push_back({b.x, b.y, b.w, b.h, b.label, -1});
    if (i < a.masks.size()) masksOf[static_cast<size_t>(b.image)].emplace_back(&a.masks[i], b.label);
  }
  std::vector<std::string> classes;
  for (const auto& c : a.categories) classes.push_back(c.name);
  std::vector<std::vector<QImage>> samples(classes.size());
  for (const int64_t item : plan.train.items) {
    const auto& boxes = boxesOf[static_cast<size_t>(item)];
    QImage drawn;  // decoded once, shown in each of its classes' rows
    for (size_t k = 0; k < classes.size(); ++k) {
      auto& row = samples[k];
      if (static_cast<int>(row.size()) >= perClass || std::none_of(boxes.begin(), boxes.end(), [&](const DrawnBox& b) {
            return b.label == static_cast<int64_t>(k);
          }))
        continue;
      if (drawn.isNull()) {
        try {
          const QImage image = overlayInstances(toQImage(decodeImageFile(a.images[static_cast<size_t>(item)].file, 3)),
                                                masksOf[static_cast<size_t>(item)], classes.size(), 0.45);
          drawn = drawBoxes(image, boxes, classes, kBoxedSampleSize);
        } catch (const DataError&) {
          // shown as unreadable; the run says more
        }
      }
      row.push_back(drawn);
    }
  }
  return samples;
}

// A segmentation plan's samples: for each class but the background, up to
// perClass training images with pixels of it, their masks drawn over them
// (the first 200 images looked at: enough to fill the rows of most data).
std::vector<std::vector<QImage>> maskedSamples(const DataPlan& plan, int perClass) {
  const size_t classes = plan.classNames.size();
  std::vector<std::vector<QImage>> samples(classes);
  int looked = 0;
  for (const int64_t item : plan.train.items) {
    if (++looked > 200) break;
    try {
      const Mask mask = itemMask(plan, item);
      std::vector<char> has(classes, 0);
      for (const uint8_t v : mask.values)
        if (v < classes) has[v] = 1;
      QImage drawn;  // decoded once, shown in each of its classes' rows
      for (size_t k = 1; k < classes; ++k) {
        if (!has[k] || static_cast<int>(samples[k].size()) >= perClass) continue;
        if (drawn.isNull())
          drawn = overlayMask(toQImage(decodeImageFile(plan.files[static_cast<size_t>(item)], 3)), mask, classes, 0.5,
                              kBoxedSampleSize);
        samples[k].push_back(drawn);
      }
    } catch (const DataError&) {
      // the run names the file and what is wrong with it
    }
  }
  return samples;
}

}  // namespace

QString dataPreviewKey(const TrainConfig& c) {
  nlohmann::json k = toJson(c)["data"];
  // The augmentations change no count or image (their preview has its own key).
  for (auto it = k.begin(); it != k.end();) it = it.key().rfind("augment_", 0) == 0 ? k.erase(it) : std::next(it);
  k["seed"] = c.train.seed;
  k["backbone"] = isTorchvisionBackbone(c.model.kind);  // its input shape: 3x224x224 by default
  return QString::fromStdString(k.dump());
}

DataPreview makeDataPreview(const TrainConfig& config, int perClass) {
  DataPreview p;
  try {
    const DataPlan plan = planData(config);
    p.description = describePlan(plan, config.data, config.model.kind);
    // A row of samples per class; one row of a folder's regression or multi-label images.
    const int64_t classes = plan.hasTargets() ? 1 : plan.classes();
    p.samples.assign(static_cast<size_t>(classes), {});
    if (plan.format == DataFormat::idx) {
      // The first training images of each class in the file's order: only
      // the file's start up to the last of them is inflated (Fashion-MNIST's
      // whole 47 MB took 0.4 s of the window's thread each time).
      std::vector<std::pair<int64_t, int64_t>> byRow;  // (row in the file, class)
      for (size_t i = 0; i < plan.train.items.size(); ++i)
        if (plan.train.items[i] < plan.idxTrainCount) byRow.emplace_back(plan.train.items[i], plan.train.labels[i]);
      std::sort(byRow.begin(), byRow.end());
      std::vector<std::vector<int64_t>> rowsOf(static_cast<size_t>(classes));  // each class's first rows
      int64_t last = -1;
      for (const auto& [row, label] : byRow)
        if (auto& rows = rowsOf[static_cast<size_t>(label)]; static_cast<int>(rows.size()) < perClass) {
          rows.push_back(row);
          last = std::max(last, row);
        }
      const IdxArray images = readIdxFirst(plan.idxTrainImages, 3, last + 1);
      const int64_t px = images.dims[1] * images.dims[2];
      for (size_t k = 0; k < rowsOf.size(); ++k)
        for (const int64_t row : rowsOf[k]) {
          Image img;
          img.height = images.dims[1];
          img.width = images.dims[2];
          img.channels = 1;
          const auto at = images.data.begin() + static_cast<std::ptrdiff_t>(row * px);
          img.pixels.assign(at, at + px);
          p.samples[k].push_back(toQImage(img));
        }
    } else if (plan.detection()) {
      p.samples = boxedSamples(plan, perClass);
    } else if (plan.segmentation()) {
      p.samples = maskedSamples(plan, perClass);
    } else if (plan.format == DataFormat::image_folder) {
      const int want = static_cast<int>(p.description.input.channels);
      for (size_t i = 0; i < plan.train.items.size(); ++i) {
        auto& row = p.samples[static_cast<size_t>(plan.train.labels[i])];
        if (static_cast<int>(row.size()) >= perClass) continue;
        try {
          row.push_back(toQImage(decodeImageFile(plan.files[static_cast<size_t>(plan.train.items[i])], want)));
        } catch (const DataError&) {
          row.push_back(QImage());  // shown as unreadable; the run says more
        }
      }
    } else {
      const CsvTable t = readCsvTable(plan.trainTable);
      for (const auto& c : t.columns) p.columns << QString::fromStdString(c);
      for (size_t r = 0; r < t.rows.size() && r < 12; ++r) {
        QStringList cells;
        for (const auto& cell : t.rows[r]) cells << QString::fromStdString(cell);
        p.rows.push_back(cells);
      }
    }
    p.ok = true;
  } catch (const std::exception& e) {
    p.error = QString::fromStdString(e.what());
    p.field = fieldOf(p.error, config);
  }
  return p;
}

}  // namespace studio::ui
