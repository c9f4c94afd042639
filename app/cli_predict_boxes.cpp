// training-studio-cli predict of a detection run: its boxes as COCO's
// results JSON (an instance segmentation's with their RLE masks) or a CSV,
// and with --annotations COCO's figures (the masks' too), printed as
// pycocotools' COCOeval.summarize() prints them (to six places).
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "cli_predict.h"
#include "studio/box_predict.h"
#include "studio/errors.h"
#include "studio/file_io.h"

namespace studio {
namespace {

// COCOeval.summarize()'s twelve lines, in CocoStats::stats' order.
constexpr std::array<const char*, 12> kSummaryLines{
    "Average Precision  (AP) @[ IoU=0.50:0.95 | area=   all | maxDets=100 ]",
    "Average Precision  (AP) @[ IoU=0.50      | area=   all | maxDets=100 ]",
    "Average Precision  (AP) @[ IoU=0.75      | area=   all | maxDets=100 ]",
    "Average Precision  (AP) @[ IoU=0.50:0.95 | area= small | maxDets=100 ]",
    "Average Precision  (AP) @[ IoU=0.50:0.95 | area=medium | maxDets=100 ]",
    "Average Precision  (AP) @[ IoU=0.50:0.95 | area= large | maxDets=100 ]",
    "Average Recall     (AR) @[ IoU=0.50:0.95 | area=   all | maxDets=  1 ]",
    "Average Recall     (AR) @[ IoU=0.50:0.95 | area=   all | maxDets= 10 ]",
    "Average Recall     (AR) @[ IoU=0.50:0.95 | area=   all | maxDets=100 ]",
    "Average Recall     (AR) @[ IoU=0.50:0.95 | area= small | maxDets=100 ]",
    "Average Recall     (AR) @[ IoU=0.50:0.95 | area=medium | maxDets=100 ]",
    "Average Recall     (AR) @[ IoU=0.50:0.95 | area= large | maxDets=100 ]"};

bool endsWith(const std::string& s, const std::string& end) {
  return s.size() >= end.size() && s.compare(s.size() - end.size(), end.size(), end) == 0;
}

}  // namespace

int PredictCommand::runBoxes() {
  if (!m_outOption->count()) m_out = "detections.json";
  const bool csv = endsWith(m_out, ".csv");
  if (!csv && !endsWith(m_out, ".json"))
    throw InputError("--out " + m_out + ": a detector's boxes are written as COCO's results (a .json name) or a CSV " +
                     "of one row per box (a .csv name)");
  checkOutputFile(m_out, "--out", m_overwrite, {m_input, m_annotations});
  for (const CLI::Option* o : {m_topK, m_tta})
    if (o->count())
      std::fprintf(stderr, "warning: %s has no effect: run %s is a detector, which gives boxes, not classes\n",
                   o->get_name().c_str(), m_folder.c_str());
  Predictor predictor(m_folder, m_options);
  const PredictionReport r = predictShown(predictor, "finding boxes");
  if (csv)
    writeBoxesCsv(r, m_out);
  else
    writeCocoResults(r, m_out);
  if (!r.note.empty()) std::fprintf(stderr, "note: %s\n", r.note.c_str());
  const auto n = static_cast<long long>(r.rows.size());
  std::printf("found %lld boxes in %lld images with %s on %s in %.2f s (%.1f images per second)\n",
              static_cast<long long>(r.boxesFound), n - r.skipped, r.model.c_str(), r.device.c_str(), r.seconds,
              r.seconds > 0 ? static_cast<double>(n) / r.seconds : 0.0);
  for (const auto& row : r.rows)
    if (!row.error.empty()) std::fprintf(stderr, "skipped %s: %s\n", row.source.c_str(), row.error.c_str());
  if (r.skipped > 0)
    std::printf("skipped %lld image(s)%s\n", static_cast<long long>(r.skipped),
                csv ? (" (each one's reason is in the error column of " + m_out + ")").c_str() : "");
  if (r.evaluated) {
    std::printf("COCO's figures against %s (%lld boxes):\n", m_annotations.c_str(),
                static_cast<long long>(r.truthBoxes));
    for (size_t i = 0; i < kSummaryLines.size(); ++i) std::printf(" %s = %.6f\n", kSummaryLines[i], r.coco[i]);
    std::printf("AP@[.50:.95] per class:\n");
    for (size_t k = 0; k < r.classes.size(); ++k) {
      if (std::isnan(r.apPerClass[k]))
        std::printf("  %-16s (none in the annotations)\n", r.classes[k].c_str());
      else
        std::printf("  %-16s %.6f\n", r.classes[k].c_str(), r.apPerClass[k]);
    }
    if (r.maskEvaluated) {
      std::printf("COCO's mask figures (segm) against %s:\n", m_annotations.c_str());
      for (size_t i = 0; i < kSummaryLines.size(); ++i) std::printf(" %s = %.6f\n", kSummaryLines[i], r.maskCoco[i]);
    }
  } else if (!m_annotations.empty()) {
    std::printf("no COCO figures: the prediction stopped before its last image\n");
  }
  std::printf("wrote %s\n", m_out.c_str());
  return 0;
}

}  // namespace studio
