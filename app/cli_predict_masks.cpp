// `predict` of a segmentation run (studio/mask_predict.h): each image's
// index PNG mask into the --out folder, and with --annotations (masks as
// data.annotations takes them) the figures of the pixels' confusion matrix.
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "cli_predict.h"
#include "studio/errors.h"
#include "studio/mask_predict.h"

namespace studio {

int PredictCommand::runMasks() {
  namespace fs = std::filesystem;
  if (!m_outOption->count()) m_out = "masks";
  std::error_code ec;
  if (fs::exists(m_out, ec) && !fs::is_directory(m_out, ec))
    throw InputError("--out " + m_out + ": a segmenter's masks are written into a folder; this is a file");
  if (fs::is_directory(m_out, ec) && !fs::is_empty(m_out, ec) && !m_overwrite)
    throw InputError("--out " + m_out +
                     " holds files already: name a new folder, or give --overwrite to write the "
                     "masks over those of the same names");
  for (const CLI::Option* o : {m_topK, m_tta})
    if (o->count())
      std::fprintf(stderr, "warning: %s has no effect: run %s is a segmenter, which gives a class per pixel\n",
                   o->get_name().c_str(), m_folder.c_str());
  m_options.masksDir = m_out;
  Predictor predictor(m_folder, m_options);
  const PredictionReport r = predictShown(predictor, "segmenting");
  if (!r.note.empty()) std::fprintf(stderr, "note: %s\n", r.note.c_str());
  const auto n = static_cast<long long>(r.rows.size());
  std::printf("segmented %lld images with %s on %s in %.2f s (%.1f images per second)\n", n - r.skipped,
              r.model.c_str(), r.device.c_str(), r.seconds, r.seconds > 0 ? static_cast<double>(n) / r.seconds : 0.0);
  for (const auto& row : r.rows)
    if (!row.error.empty()) std::fprintf(stderr, "skipped %s: %s\n", row.source.c_str(), row.error.c_str());
  if (r.evaluated) {
    const SegmentationFigures& f = r.segmentation;
    std::printf("figures against %s (%lld images with a mask, %lld pixels, each image at its own size):\n",
                m_annotations.c_str(), static_cast<long long>(r.labelled), static_cast<long long>(f.pixels));
    std::printf(
        " mean IoU = %.6f\n pixel accuracy = %.6f\n mean class accuracy = %.6f\n mean Dice = %.6f\n"
        " frequency-weighted IoU = %.6f\n",
        f.meanIou, f.pixelAccuracy, f.meanClassAccuracy, f.meanDice, f.frequencyWeightedIou);
    std::printf("IoU per class:\n");
    for (size_t k = 0; k < r.classes.size(); ++k) {
      if (std::isnan(f.iou[k]))
        std::printf("  %-16s (in neither the masks nor the predictions)\n", r.classes[k].c_str());
      else
        std::printf("  %-16s %.6f\n", r.classes[k].c_str(), f.iou[k]);
    }
  } else if (!m_annotations.empty()) {
    std::printf("no figures: no image under %s has a mask in %s\n", m_input.c_str(), m_annotations.c_str());
  }
  std::printf("wrote %lld masks into %s\n", static_cast<long long>(r.masksWritten), m_out.c_str());
  return 0;
}

}  // namespace studio
