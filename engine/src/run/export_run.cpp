// exportRun (declared in studio/session.h): a run's weights for use outside
// the studio.
#include <torch/csrc/jit/serialization/pickle.h>

#include <filesystem>
#include <fstream>

#include "data/image_dataset.h"
#include "models/model_factory.h"
#include "run/checkpoint.h"
#include "run/run_recorder.h"
#include "studio/session.h"

namespace studio {
namespace fs = std::filesystem;

void exportRun(const std::string& runDir, const std::string& outDir, const std::string& which) {
  if (which != "best" && which != "last")
    throw std::invalid_argument("export: which checkpoint must be best or last (got \"" + which + "\")");
  TrainConfig cfg = readRunSettings(runDir);
  std::string ckpt = runDir + "/checkpoints/" + which + ".ckpt";
  if (which == "best" && !fs::exists(ckpt)) ckpt = runDir + "/checkpoints/last.ckpt";
  // Fashion-MNIST and MNIST: 1x28x28 images, 10 classes.
  torch::nn::Sequential model = buildModel(cfg.model, 1, 28, 28, 10);
  loadModelWeights(ckpt, model);

  std::error_code ec;
  fs::create_directories(outDir, ec);
  if (ec) throw RunIoError("cannot create export folder " + outDir + ": " + ec.message());
  // A plain state dict in torch.save's format: torch.load(path) in Python
  // reads it with the default weights_only=True.
  c10::Dict<std::string, at::Tensor> state;
  for (const auto& p : model->named_parameters()) state.insert(p.key(), p.value().detach().cpu().contiguous());
  for (const auto& b : model->named_buffers()) state.insert(b.key(), b.value().detach().cpu().contiguous());
  std::vector<char> bytes = torch::jit::pickle_save(c10::IValue(state));
  writeFileAtomically(outDir + "/model.pt", std::string(bytes.begin(), bytes.end()));
  fs::copy_file(ckpt, outDir + "/checkpoint.ckpt", fs::copy_options::overwrite_existing, ec);
  if (ec) throw RunIoError("cannot write " + outDir + "/checkpoint.ckpt: " + ec.message());
  fs::copy_file(runDir + "/settings.json", outDir + "/settings.json", fs::copy_options::overwrite_existing, ec);
  if (ec) throw RunIoError("cannot write " + outDir + "/settings.json: " + ec.message());
}

}  // namespace studio
