#include "cli_label.h"

#include <cstdio>

#include "cli_progress.h"
#include "studio/csv_table.h"
#include "studio/errors.h"
#include "studio/file_io.h"
#include "studio/label_export.h"

namespace studio::cli {

LabelCommand::LabelCommand(CLI::App& app) {
  m_cmd = app.add_subcommand("label", "Help label images: the order to label them in, or the model's proposals");
  auto* suggest =
      m_cmd->add_option("--suggest", m_suggestRun,
                        "A classifier's or detector's run or export folder: order the --data images by its "
                        "uncertainty (a detector's: its least confident box's), highest first, near-copies of "
                        "images before them last (a classifier's)");
  auto* prelabel = m_cmd->add_option("--prelabel", m_prelabelRun,
                                     "A classifier's or detector's run or export folder: its proposed class (or "
                                     "boxes) for each --data image, as JSON");
  auto* exported =
      m_cmd->add_option("--export", m_exportLabels,
                        "A labels file of the Label tab's (a labels.csv of classes or a COCO .json of "
                        "boxes): its --data images copied into --out, a new folder, as --format lays them");
  suggest->excludes(prelabel);
  exported->excludes(suggest)->excludes(prelabel);
  m_cmd->add_option("--format", m_format,
                    "--export: folders (class folders, for a classes file; its default), yolo (boxes' default) or voc");
  m_cmd->add_option("--data", m_data, "The folder of images (its sub-folders too)")->required();
  m_cmd->add_option("--out", m_out, "The file written (default order.csv; with --prelabel proposals.json)");
  m_cmd->add_option("--strategy", m_strategy,
                    "--suggest: least-confidence (1 - the top probability; default), margin (1 - the top two's "
                    "difference) or entropy (of the probabilities)");
  m_cmd->add_option("--similarity", m_options.similarity,
                    "--suggest: near-copies are images whose penultimate features have at least this cosine "
                    "similarity with one placed before them; they go last (default 0.95; above 1: no guard)");
  m_cmd->add_option("--top-k", m_prelabel.topK, "--prelabel: a classifier's classes proposed per image (default 3)");
  m_cmd->add_option("--min-score", m_prelabel.minScore,
                    "--prelabel: a detector's boxes scored at least this are proposed (default 0.5)");
  m_cmd->add_option("--device", m_options.device, "auto (default), cpu, cuda or cuda:N");
  m_cmd->add_flag("--overwrite", m_overwrite, "Replace the --out file when it exists");
}

int LabelCommand::run() {
  if (!m_exportLabels.empty()) return exportLabels();
  if (m_suggestRun.empty() == m_prelabelRun.empty())
    throw InputError(
        "label: give --suggest RUN (the order to label in), --prelabel RUN (the model's proposals) or --export "
        "LABELS (a labels file as class folders, YOLO or VOC)");
  if (m_out.empty()) m_out = m_suggestRun.empty() ? "proposals.json" : "order.csv";
  return m_suggestRun.empty() ? prelabel() : suggest();
}

int LabelCommand::prelabel() {
  checkOutputFile(m_out, "--out", m_overwrite, {m_data});
  m_prelabel.device = m_options.device;
  PhaseBar bar("proposing");
  const nlohmann::json doc = prelabelImages(m_prelabelRun, m_data, m_prelabel, bar.progress());
  bar.endLine();
  writeFileAtomically(m_out, doc.dump(1) + "\n");
  for (const auto& why : doc["skipped"]) std::fprintf(stderr, "skipped %s\n", why.get<std::string>().c_str());
  int64_t boxes = 0;
  for (const auto& image : doc["images"])
    boxes += image.contains("boxes") ? static_cast<int64_t>(image["boxes"].size()) : 0;
  if (doc["task"] == "detection")
    std::printf("proposed %lld boxes (score %g or more) for %zu images with %s\n", static_cast<long long>(boxes),
                m_prelabel.minScore, doc["images"].size(), doc["model"].get<std::string>().c_str());
  else
    std::printf("proposed a class for %zu images with %s\n", doc["images"].size(),
                doc["model"].get<std::string>().c_str());
  std::printf("wrote %s\n", m_out.c_str());
  return 0;
}

int LabelCommand::exportLabels() {
  if (m_out.empty()) throw InputError("label --export: give --out, a new folder for the exported labels");
  const bool boxes = m_exportLabels.size() > 5 && m_exportLabels.substr(m_exportLabels.size() - 5) == ".json";
  const std::string format = m_format.empty() ? (boxes ? "yolo" : "folders") : m_format;
  if (boxes ? format != "yolo" && format != "voc" : format != "folders")
    throw InputError("--format " + format + ": " + m_exportLabels +
                     (boxes ? " holds boxes; give yolo or voc" : " holds classes; give folders"));
  int64_t n = 0;
  if (boxes) {
    const BoxLabelStore store(m_exportLabels);
    n = format == "yolo" ? exportYolo(m_data, store.images(), store.categories(), m_out)
                         : exportVoc(m_data, store.images(), store.categories(), m_out);
  } else {
    const LabelStore store(m_exportLabels);
    n = exportClassFolders(m_data, store.labels(), m_out);
  }
  std::printf("exported %lld labelled images as %s to %s\n", static_cast<long long>(n), format.c_str(), m_out.c_str());
  return 0;
}

int LabelCommand::suggest() {
  m_options.strategy.setName(m_strategy);
  if (!m_options.strategy.known())
    throw InputError("--strategy " + m_strategy + ": give least-confidence, margin or entropy");
  checkOutputFile(m_out, "--out", m_overwrite, {m_data});
  PhaseBar bar("ordering");
  const Suggestion s = suggestLabellingOrder(m_suggestRun, m_data, m_options, bar.progress());
  bar.endLine();
  char number[64];
  std::string csv = "rank,file,uncertainty,predicted,probability,near_copy_of\n";
  for (size_t i = 0; i < s.order.size(); ++i) {
    const SuggestedImage& e = s.order[i];
    std::snprintf(number, sizeof number, "%.9g", e.uncertainty);
    csv += std::to_string(i + 1) + "," + csvField(e.file) + "," + number + "," +
           (e.predicted < 0 ? std::string() : csvField(s.classes[static_cast<size_t>(e.predicted)])) + ",";
    std::snprintf(number, sizeof number, "%.6g", static_cast<double>(e.probability));
    csv += std::string(number) + "," + csvField(e.nearCopyOf) + "\n";
  }
  writeFileAtomically(m_out, csv);
  for (const auto& why : s.skipped) std::fprintf(stderr, "skipped %s\n", why.c_str());
  std::printf("ordered %zu images by %s with %s", s.order.size(), m_options.strategy.name().c_str(), s.model.c_str());
  if (s.guarded)
    std::printf("; %lld near-%s (cosine similarity %g or more) moved last\n", static_cast<long long>(s.nearCopies),
                s.nearCopies == 1 ? "copy" : "copies", m_options.similarity);
  else
    std::printf("; no near-copy guard (%s)\n",
                m_options.similarity > 1 ? "--similarity above 1" : "the model gives no features to compare");
  std::printf("wrote %s\n", m_out.c_str());
  return 0;
}

}  // namespace studio::cli
