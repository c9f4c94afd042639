// exportRun (declared in studio/session.h): a run's weights for use outside
// the studio.
#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/export.h>
#include <torch/csrc/jit/serialization/pickler.h>

#include <filesystem>
#include <fstream>

#include "data/image_dataset.h"
#include "models/model_factory.h"
#include "run/checkpoint.h"
#include "run/run_recorder.h"
#include "studio/session.h"

namespace studio {
namespace fs = std::filesystem;

namespace {

// torch::jit::pickle_save, without the type tags it adds to dicts and lists
// (torch.jit._pickle.restore_type_tag), which weights_only loading refuses.
std::string torchSaveFormat(const c10::IValue& value) {
  std::vector<char> pickled;
  // No tensor table: tensors are written as storages, as torch.save does.
  torch::jit::Pickler pickler([&](const char* buf, size_t n) { pickled.insert(pickled.end(), buf, buf + n); },
                              nullptr, nullptr, nullptr, nullptr, /*tag_aggregates=*/false);
  pickler.protocol();
  pickler.pushIValue(value);
  pickler.stop();
  std::string container;
  caffe2::serialize::PyTorchStreamWriter writer([&](const void* data, size_t n) {
    container.append(static_cast<const char*>(data), n);
    return n;
  });
  torch::jit::writeArchiveAndTensors("data", pickled.data(), pickled.size(), pickler.tensorData(), writer);
  writer.writeEndOfFile();
  return container;
}

}  // namespace

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
  writeFileAtomically(outDir + "/model.pt", torchSaveFormat(c10::IValue(state)));
  fs::copy_file(ckpt, outDir + "/checkpoint.ckpt", fs::copy_options::overwrite_existing, ec);
  if (ec) throw RunIoError("cannot write " + outDir + "/checkpoint.ckpt: " + ec.message());
  fs::copy_file(runDir + "/settings.json", outDir + "/settings.json", fs::copy_options::overwrite_existing, ec);
  if (ec) throw RunIoError("cannot write " + outDir + "/settings.json: " + ec.message());
}

}  // namespace studio
