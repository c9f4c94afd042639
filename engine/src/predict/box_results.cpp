// writeCocoResults and writeBoxesCsv (studio/box_predict.h).
#include <cstdio>

#include <nlohmann/json.hpp>

#include "studio/box_predict.h"
#include "studio/csv_table.h"
#include "studio/file_io.h"

namespace studio {

void writeCocoResults(const PredictionReport& r, const std::string& path) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& row : r.rows) {
    const nlohmann::json image = row.imageId >= 0 ? nlohmann::json(row.imageId) : nlohmann::json(row.name);
    for (const auto& b : row.boxes) {
      list.push_back({{"image_id", image},
                      {"category_id", r.categoryIds[static_cast<size_t>(b.label)]},
                      {"bbox", {b.x, b.y, b.width, b.height}},
                      {"score", b.score}});
      if (b.mask)
        list.back()["segmentation"] = {{"size", {b.mask->height, b.mask->width}}, {"counts", rleToString(*b.mask)}};
    }
  }
  writeFileAtomically(path, list.dump() + "\n");
}

void writeBoxesCsv(const PredictionReport& r, const std::string& path) {
  std::string out = "source,image_id,class,category_id,score,x,y,width,height,error\n";
  char numbers[160];
  for (const auto& row : r.rows) {
    const std::string head =
        csvField(row.source) + "," + (row.imageId >= 0 ? std::to_string(row.imageId) : csvField(row.name)) + ",";
    if (row.boxes.empty()) out += head + ",,,,,,," + csvField(row.error) + "\n";
    for (const auto& b : row.boxes) {
      std::snprintf(numbers, sizeof numbers, "%.6g,%.9g,%.9g,%.9g,%.9g", b.score, b.x, b.y, b.width, b.height);
      out += head + csvField(r.classes[static_cast<size_t>(b.label)]) + "," +
             std::to_string(r.categoryIds[static_cast<size_t>(b.label)]) + "," + numbers + ",\n";
    }
  }
  writeFileAtomically(path, out);
}

}  // namespace studio
