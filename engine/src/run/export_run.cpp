// exportRun (declared in studio/session.h): a run's weights for use outside
// the studio.
#include <filesystem>

#include "data/image_dataset.h"
#include "models/model_factory.h"
#include "run/checkpoint.h"
#include "run/run_recorder.h"
#include "run/tensor_archive.h"
#include "studio/file_io.h"
#include "studio/session.h"

namespace studio {
namespace fs = std::filesystem;

ExportResult exportRun(const std::string& runDir, const std::string& outDir, const std::string& which) {
  if (which != "best" && which != "last")
    throw std::invalid_argument("export: which checkpoint must be best or last (got \"" + which + "\")");
  TrainConfig cfg = readRunSettings(runDir);
  ExportResult result;
  result.checkpoint = which;
  std::string ckpt = runDir + "/checkpoints/" + which + ".ckpt";
  if (which == "best" && !fs::exists(ckpt)) {
    ckpt = runDir + "/checkpoints/last.ckpt";
    result.checkpoint = "last";
    result.note = "the run has no best checkpoint (output.save_best was off, or it never evaluated), so the last "
                  "one was exported";
  }
  // Fashion-MNIST and MNIST: 1x28x28 images, 10 classes.
  torch::nn::Sequential model = buildModel(cfg.model, 1, 28, 28, 10);
  loadModelWeights(ckpt, model);

  std::error_code ec;
  fs::create_directories(outDir, ec);
  if (ec) throw IoError("cannot create export folder " + outDir + ": " + ec.message());
  // A plain state dict in torch.save's format: torch.load(path) in Python
  // reads it with the default weights_only=True.
  c10::Dict<std::string, at::Tensor> state;
  for (const auto& p : model->named_parameters()) state.insert(p.key(), p.value().detach().cpu().contiguous());
  for (const auto& b : model->named_buffers()) state.insert(b.key(), b.value().detach().cpu().contiguous());
  auto write = [&](const std::string& name, const std::string& bytes) {
    writeFileAtomically(outDir + "/" + name, bytes);  // never through a link planted there
    result.files.push_back(outDir + "/" + name);
  };
  write("model.pt", saveTensorArchive(c10::IValue(state)));
  write("checkpoint.ckpt", readFileBytes(ckpt, "checkpoint"));
  write("settings.json", readFileBytes(runDir + "/settings.json", "settings file"));
  return result;
}

}  // namespace studio
