#pragma once
// Models behind one interface (as PyTorch's torch/imethod.h: depend on the
// interface, not on an implementation). The trainer, checkpoints, export and
// the model summary talk only to this.
//  - BuiltinModel: the mlp/cnn/resnet a ModelConfig describes, a
//    torch::nn::Sequential (exported as a state dict for the same layers in
//    Python: model.pt);
//  - TorchScriptModel: a module saved in Python with torch.jit.save, loaded
//    with torch::jit::load (exported back as TorchScript: model.ts).
// Thread: engine thread (or the one thread that made it).

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <torch/types.h>
#include <nlohmann/json_fwd.hpp>

#include "studio/dataset_info.h"
#include "studio/train_config.h"

namespace studio {

class ProcessGroup;
namespace detection {
struct Detections;
struct RcnnTransformOptions;
}  // namespace detection

struct LayerSummary {
  std::string name;             // "0", "conv1", ...
  std::string type;             // "Conv2d", "ResidualBlock", ...
  std::vector<int64_t> output;  // empty when unknown
  int64_t parameters = 0;
};

class Model {
 public:
  virtual ~Model() = default;
  virtual torch::Tensor forward(const torch::Tensor& x) = 0;
  // The tensors the optimizer updates.
  virtual std::vector<torch::Tensor> parameters() = 0;
  // Every parameter's elements, frozen ones included.
  virtual int64_t parameterCount() = 0;
  // Parameters then buffers, by name: what a checkpoint and an export hold.
  virtual std::vector<std::pair<std::string, torch::Tensor>> namedState() = 0;
  // Under torchrun (distributed.batchnorm sync): BatchNorm layers normalise
  // with the statistics of all ranks' batches; how many layers do (-1: this
  // kind of model cannot).
  virtual int synchroniseBatchNorm(ProcessGroup* group) { return -1; }
  // The parameters the optimizer updates, by name, in the order of
  // parameters() (fine-tuning's layer groups, train/callbacks/finetune.cpp).
  virtual std::vector<std::pair<std::string, torch::Tensor>> namedParameters() = 0;
  // The layer group a parameter belongs to: its layer's name ("layer1",
  // "features.3", "0"); by default the name's first component.
  virtual std::string layerGroup(const std::string& parameter) const;
  // Fine-tuning: while training, the BatchNorm layers whose group `frozen`
  // names keep their running statistics (evaluation mode); an empty function
  // lets them all follow the data. A TorchScript model's layers are its own.
  virtual void freezeNormStatistics(std::function<bool(const std::string& group)> frozen) {}
  // The buffers alone (BatchNorm's running statistics).
  virtual std::vector<torch::Tensor> buffers() = 0;
  virtual void setTraining(bool on) = 0;
  virtual void to(const torch::Device& device) = 0;
  // Conv weights (4-d parameters) in channels-last layout.
  void toChannelsLast();
  // Each top-level layer's output shape and parameter count for `sample` (a
  // batch on the model's device), in eval mode and without autograd.
  virtual std::vector<LayerSummary> layers(const torch::Tensor& sample) = 0;
  // "cnn w32 d2", "TorchScript net.ts"
  virtual std::string description() const = 0;
  // Writes the model for use outside the studio into dir; the files written.
  virtual std::vector<std::string> exportTo(const std::string& dir) = 0;
  // What the export's preprocessing.json adds of how this model was built,
  // beyond the run's settings (a detector's sizes and post-processing as
  // "detector"); nothing by default.
  virtual void describeExport(nlohmann::json& preprocessing) const {}
  // memory.activation_checkpointing: splits the layers into segments of
  // `blocksPerSegment` blocks (0: about sqrt(blocks), as Chen et al. 2016);
  // in training, every segment but the last keeps only its input in the
  // forward pass and recomputes its activations in the backward pass (the
  // same gradients, dropout masks and BatchNorm statistics as without).
  // Returns what it did, for the log ("4 segments of 3 blocks ..."); throws
  // InputError when this model cannot be split.
  virtual std::string checkpointActivations(int64_t blocksPerSegment);
  // Grad-CAM (predict/grad_cam.cpp): the logits of x, and the activations of
  // the last convolutional stage, kept in the autograd graph, with the
  // stage's name in layers() ("4"). The stage is the last layer before the
  // classifier's flatten whose output is [N, C, h, w] with more than one
  // position. Throws ModelError when the model has none (an mlp, a
  // TorchScript module, whose layers the studio does not know).
  virtual torch::Tensor forwardWithStage(const torch::Tensor& x, torch::Tensor& stage, std::string& name);
  // The logits of x, and in `features` what the classifier's last layer
  // takes ([N, D]: the penultimate features, the audit's feature space for
  // near-duplicates and outliers). By default none (left undefined): a
  // TorchScript module's layers are not the studio's to know.
  virtual torch::Tensor forwardWithFeatures(const torch::Tensor& x, torch::Tensor& features) {
    features = torch::Tensor();
    return forward(x);
  }
  // model.weights (fine-tuning): loads the file into this model as its kind
  // takes one; fills `record` (run_info.json's "pretrained") and returns what
  // it did, for the log. A kind that takes no weights file loads nothing and
  // returns "" (the settings say model.weights has no effect there). Throws
  // ModelError naming the file when it does not fit.
  virtual std::string loadStartingWeights(const std::string& path, bool keepHead, nlohmann::json& record) { return ""; }
  // A model read from a file (TorchScript): the file's SHA-256, which a
  // resume checks; "" for one the settings build.
  virtual std::string fileSha256() const { return ""; }

  // Boxes (task.kind detection; models/detector_model.h). The settings keep
  // a detection run to a detector, so any other model refuses these
  // (std::logic_error).
  // Training: the losses, by name in the model's order, for images (3 x h x w
  // in [0, 1]) and their boxes (K x 4, pixels) and labels (K, 1 .. classes);
  // with masks (task.kind instance_segmentation: K x h x w, 0/1, at each
  // image's size) a detector with a mask head adds its loss_mask.
  virtual std::vector<std::pair<std::string, torch::Tensor>> boxLosses(const std::vector<torch::Tensor>& images,
                                                                       const std::vector<torch::Tensor>& boxes,
                                                                       const std::vector<torch::Tensor>& labels,
                                                                       const std::vector<torch::Tensor>& masks = {});
  // Evaluation: each image's boxes in its own pixels, scores and labels.
  virtual std::vector<detection::Detections> detectBoxes(const std::vector<torch::Tensor>& images);
  // How the model resizes an image before it detects (predict pools images of one placement).
  virtual const detection::RcnnTransformOptions& boxPlacement() const;

  // A class per pixel (task.kind segmentation; models/segmenter_model.h):
  // the main head's logits [N, classes, H, W] and the auxiliary head's
  // (undefined without one). Any other model refuses (std::logic_error).
  virtual std::pair<torch::Tensor, torch::Tensor> segmentPixels(const torch::Tensor& x);
};

// Throws ModelError naming model.path when a TorchScript file cannot be used.
std::unique_ptr<Model> makeModel(const ModelConfig& config, const InputShape& input, int64_t classes);

// Runs a batch of 2 zero examples through the model (eval mode, no autograd)
// and checks it gives [2, classes]; throws ModelError saying the shapes.
void checkModelOutput(Model& model, const ModelConfig& config, const InputShape& input, int64_t classes,
                      const torch::Device& device);

// A batch of n zero examples of this input shape.
torch::Tensor sampleInput(const InputShape& input, int64_t n, const torch::Device& device);

}  // namespace studio
