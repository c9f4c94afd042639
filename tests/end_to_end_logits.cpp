// The C++ side of the export check: the exported checkpoint's logits on the
// first test images, normalised as the run did (kept out of the Qt test
// file so the torch headers never meet Qt's).
#include <nlohmann/json.hpp>

#include "data/image_dataset.h"
#include "run/run_recorder.h"
#include "torch_test_support.h"

namespace studio {

void engineLogits(const std::string& exportDir, const std::string& imagesPath, int count, nlohmann::json& out) {
  auto settings = nlohmann::json::parse(test::readText(exportDir + "/settings.json"));
  const double mean = settings["run_info"]["normalization"]["mean"].get<double>();
  const double std = settings["run_info"]["normalization"]["std"].get<double>();
  TrainConfig cfg = readRunSettings(exportDir);
  torch::nn::Sequential model = buildModel(cfg.model, 1, 28, 28, 10);
  loadModelWeights(exportDir + "/checkpoint.ckpt", model);
  model->eval();
  const std::string labels = "/usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz";
  ImageSet set = loadImageSet(imagesPath, labels);
  torch::NoGradGuard noGrad;
  torch::Tensor x = (set.images.slice(0, 0, count).to(torch::kFloat32) / 255.0 - mean) / std;
  torch::Tensor logits = model->forward(x).contiguous();
  out = {{"images", imagesPath}, {"count", count}, {"mean", mean}, {"std", std}, {"logits", nlohmann::json::array()}};
  for (int i = 0; i < count; ++i) {
    std::vector<double> row;
    for (int k = 0; k < logits.size(1); ++k) row.push_back(logits[i][k].item<double>());
    out["logits"].push_back(row);
  }
}

}  // namespace studio
