// The C++ side of the export check: the exported checkpoint's logits on the
// first test images, normalised as the run did (kept out of the Qt test
// file so the torch headers never meet Qt's).
#include <nlohmann/json.hpp>

#include "studio/idx_file.h"
#include "torch_test_support.h"

namespace studio {

void engineLogits(const std::string& exportDir, const std::string& imagesPath, int count, nlohmann::json& out) {
  const nlohmann::json info = test::runInfo(exportDir);
  const double mean = info["normalization"]["mean"][0].get<double>();
  const double std = info["normalization"]["std"][0].get<double>();
  auto model = test::weightsOf(exportDir, "", exportDir + "/checkpoint.ckpt");
  model->setTraining(false);
  IdxArray images = readIdxFile(imagesPath, 3);
  torch::NoGradGuard noGrad;
  torch::Tensor u8 =
      torch::from_blob(images.data.data(), {images.dims[0], 1, images.dims[1], images.dims[2]}, torch::kUInt8);
  torch::Tensor x = (u8.slice(0, 0, count).to(torch::kFloat32) / 255.0 - mean) / std;
  torch::Tensor logits = model->forward(x).contiguous();
  out = {{"images", imagesPath}, {"count", count}, {"mean", mean}, {"std", std}, {"logits", nlohmann::json::array()}};
  for (int i = 0; i < count; ++i) {
    std::vector<double> row;
    for (int k = 0; k < logits.size(1); ++k) row.push_back(logits[i][k].item<double>());
    out["logits"].push_back(row);
  }
}

}  // namespace studio
