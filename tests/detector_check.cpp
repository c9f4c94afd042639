// The C++ side of test_detectors.py: a detector with a state dict loaded,
// on the CPU, in float32 or float64 (as the input's images are).
//   detector_check detect KIND WEIGHTS IN.safetensors OUT.safetensors [--pretrained]
//     IN: "image.i" (3 x h x w in [0, 1]); OUT: "boxes.i", "scores.i", "labels.i" (eval mode)
//   detector_check losses KIND WEIGHTS IN.safetensors OUT.safetensors SEED [--pretrained]
//     IN also "boxes.i", "labels.i" (and Mask R-CNN's "masks.i", K x h x w
//     uint8; its detections' "masks.i" come out); OUT: each loss, and "grad.<name>" of
//     every parameter (training mode, torch.manual_seed(SEED) first)
//   detector_check load KIND WEIGHTS CLASSES OUT.safetensors [--pretrained]
//     the model's whole state after loading WEIGHTS, and what was loaded on stdout
//   detector_check augment IN.safetensors OUT.safetensors SEEDS STEPS
//     (IN's masks.SEED too, when given: OUT's masks.SEED follow the boxes)
//     SEEDS: a comma list; IN: "image.S", "boxes.S", "labels.S" for each seed
//     S; STEPS: a comma list of photometric, zoomout, ioucrop, flip,
//     sizes=A:B:..., max=M; OUT the same three after augmentBoxed with a
//     generator seeded S
//   detector_check names KIND CLASSES [--pretrained]
//     every parameter and buffer name with its shape, one per line
//   detector_check export KIND CLASSES DIR [--pretrained]
//     the untrained model's export (DetectorModel::exportTo: model.safetensors, model.py) into DIR
//   detector_check settings KIND CLASSES WEIGHTS BATCHNORM DIR
//     the detector the settings build (model.weights WEIGHTS, "-" for none,
//     not read; model.detector.batchnorm BATCHNORM): its description, then
//     its names and shapes as names prints them; its export into DIR
// --pretrained: built as with trained backbone weights (torchvision's
// weights_backbone: FrozenBatchNorm2d in the Faster R-CNN MobileNetV3,
// SSDlite's MobileNetV3 without its reduced tail).
// DETECTOR_CHECK_DEVICE=cuda runs detect and losses on the GPU (the results
// come back to the CPU); DETECTOR_CHECK_SIZE=MIN:MAX sets their min_size and
// max_size, DETECTOR_CHECK_PROPOSALS=TEST:TRAINED a two-stage detector's
// proposals (below); DETECTOR_CHECK_AUTOCAST=bf16 runs losses under autocast to bfloat16. Exit 2 with the message on a
// ModelError (a file that does not fit).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>

#include <sstream>

#include <ATen/CPUGeneratorImpl.h>

#include "data/box_augment.h"
#include "detection/box_coder.h"
#include "detection/faster_rcnn.h"
#include "detection/retinanet.h"
#include "models/autocast_scope.h"
#include "models/detector_model.h"
#include "studio/errors.h"
#include "studio/file_io.h"
#include "tensors/safetensors_file.h"
#include "tensors/weights_file.h"

using namespace studio;
using namespace studio::detection;

namespace {

int64_t classesIn(const NamedTensors& weights) {
  for (const auto& [name, t] : weights) {
    if (name == "roi_heads.box_predictor.cls_score.weight") return t.size(0);
    if (name == "head.classification_head.cls_logits.weight") return t.size(0) / 9;       // RetinaNet's 9 anchors
    if (name == "head.classification_head.module_list.0.1.weight") return t.size(0) / 6;  // SSDlite's 6
  }
  return 91;
}

// DETECTOR_CHECK_SIZE=MIN:MAX: min_size and max_size.
// DETECTOR_CHECK_PROPOSALS=TEST:TRAINED: a two-stage detector's proposals
// kept in evaluation (rpn_pre_nms_top_n_test and rpn_post_nms_top_n_test)
// and sampled per image in training (box_batch_size_per_image).
void applySize(DetectorOptions& o) {
  if (const char* size = std::getenv("DETECTOR_CHECK_SIZE")) {
    const std::string s(size);
    o.transform.minSizes = {std::stoll(s.substr(0, s.find(':')))};
    o.transform.maxSize = std::stoll(s.substr(s.find(':') + 1));
  }
  if (const char* proposals = std::getenv("DETECTOR_CHECK_PROPOSALS")) {
    const std::string s(proposals);
    o.rpn.preNmsTest = o.rpn.postNmsTest = std::stoll(s.substr(0, s.find(':')));
    o.roiHeads.batchPerImage = std::stoll(s.substr(s.find(':') + 1));
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string cmd = argc > 1 ? argv[1] : "";
    const bool pretrained = std::strcmp(argv[argc - 1], "--pretrained") == 0;
    const int args = argc - (pretrained ? 1 : 0);
    if (cmd == "names" && args == 4) {
      DetectorOptions o = detectorDefaults(argv[2], std::stoll(argv[3]));
      o.pretrained = pretrained;
      o.reducedTail = !pretrained;
      const std::shared_ptr<DetectorNetImpl> model = makeDetector(o);
      for (const auto& p : model->named_parameters()) std::cout << p.key() << " " << p.value().sizes() << "\n";
      for (const auto& b : model->named_buffers()) std::cout << b.key() << " " << b.value().sizes() << "\n";
      return 0;
    }
    if (cmd == "settings" && args == 7) {
      ModelConfig c;
      c.kind = argv[2];
      c.weights = std::strcmp(argv[4], "-") == 0 ? "" : argv[4];
      c.detector.batchnorm.setName(argv[5]);
      DetectorModel model(c, std::stoll(argv[3]) - 1);
      std::cout << model.description() << "\n";
      for (const auto& [name, t] : model.namedState()) std::cout << name << " " << t.sizes() << "\n";
      model.exportTo(argv[6]);
      return 0;
    }
    if (cmd == "export" && args == 5) {
      DetectorOptions o = detectorDefaults(argv[2], std::stoll(argv[3]));
      o.pretrained = pretrained;
      o.reducedTail = !pretrained;
      applySize(o);
      DetectorModel model(makeDetector(o));
      for (const auto& file : model.exportTo(argv[4])) std::cout << file << "\n";
      return 0;
    }
    if (cmd == "augment" && args == 6) {
      std::map<std::string, torch::Tensor> in;
      for (const auto& [name, t] : readWeightsFile(argv[2])) in[name] = t;
      BoxAugment a;
      std::stringstream steps(argv[5]);
      for (std::string step; std::getline(steps, step, ',');) {
        if (step == "photometric") a.photometric = true;
        if (step == "zoomout") a.zoomOut = true;
        if (step == "ioucrop") a.iouCrop = true;
        if (step == "flip") a.horizontalFlip = true;
        if (step.rfind("max=", 0) == 0) a.maxSize = std::stoll(step.substr(4));
        if (step.rfind("sizes=", 0) == 0) {
          std::stringstream sizes(step.substr(6));
          for (std::string v; std::getline(sizes, v, ':');) a.shortestSizes.push_back(std::stoll(v));
        }
      }
      NamedTensors out;
      std::stringstream seeds(argv[4]);
      for (std::string seed; std::getline(seeds, seed, ',');) {
        at::Generator gen = at::detail::createCPUGenerator(std::stoull(seed));
        const auto masks = in.find("masks." + seed);  // instance segmentation's, when given
        const BoxedImage b = augmentBoxed({in["image." + seed], in["boxes." + seed], in["labels." + seed],
                                           masks == in.end() ? torch::Tensor() : masks->second},
                                          a, gen);
        out.emplace_back("image." + seed, b.image.contiguous());
        out.emplace_back("boxes." + seed, b.boxes.contiguous());
        out.emplace_back("labels." + seed, b.labels.contiguous());
        if (b.masks.defined()) out.emplace_back("masks." + seed, b.masks.contiguous());
      }
      writeFileAtomically(argv[3], safetensorsBytes(out));
      return 0;
    }
    if (cmd == "load" && args == 6) {
      DetectorOptions o = detectorDefaults(argv[2], std::stoll(argv[4]));
      o.pretrained = pretrained;
      o.reducedTail = !pretrained;
      const std::shared_ptr<DetectorNetImpl> model = makeDetector(o);
      const DetectorWeights w = loadDetectorWeights(*model, readWeightsFile(argv[3]), argv[3]);
      std::cout << "tensors " << w.tensors << " backbone_only " << w.backboneOnly << " predictor_kept "
                << w.predictorKept << " file_classes " << w.fileClasses << "\n";
      NamedTensors out;
      for (const auto& p : model->named_parameters()) out.emplace_back(p.key(), p.value().contiguous());
      for (const auto& b : model->named_buffers()) out.emplace_back(b.key(), b.value().contiguous());
      writeFileAtomically(argv[5], safetensorsBytes(out));
      return 0;
    }
    if ((cmd == "detect" && args == 6) || (cmd == "losses" && args == 7)) {
      const NamedTensors weights = readWeightsFile(argv[3]);
      DetectorOptions o = detectorDefaults(argv[2], classesIn(weights));
      o.pretrained = pretrained;
      o.reducedTail = !pretrained;
      applySize(o);
      const std::shared_ptr<DetectorNetImpl> model = makeDetector(o);
      loadDetectorWeights(*model, weights, argv[3]);
      std::map<std::string, torch::Tensor> in;
      for (const auto& [name, t] : readWeightsFile(argv[4])) in[name] = t;
      std::vector<torch::Tensor> images, boxes, labels, masks;
      for (size_t i = 0; in.count("image." + std::to_string(i)); ++i) {
        images.push_back(in["image." + std::to_string(i)]);
        if (in.count("masks." + std::to_string(i))) masks.push_back(in["masks." + std::to_string(i)]);
        boxes.push_back(in.count("boxes." + std::to_string(i)) ? in["boxes." + std::to_string(i)] : torch::Tensor());
        labels.push_back(in.count("labels." + std::to_string(i)) ? in["labels." + std::to_string(i)] : torch::Tensor());
      }
      const char* deviceName = std::getenv("DETECTOR_CHECK_DEVICE");
      const torch::Device device(deviceName ? deviceName : "cpu");
      model->to(device, images.at(0).scalar_type());
      for (auto* list : {&images, &boxes, &labels, &masks})
        for (auto& t : *list)
          if (t.defined()) t = t.to(device);
      NamedTensors out;
      if (std::getenv("DETECTOR_CHECK_STAGES")) {  // the stages' outputs, for finding where two models part
        model->eval();
        torch::NoGradGuard noGrad;
        const ImageBatch batch = RcnnTransform(o.transform)(images, nullptr, false);
        out.emplace_back("batch", batch.tensors.contiguous());
        auto* backbone = model->named_children()["backbone"]->as<BackboneImpl>();
        if (!backbone) throw ModelError("DETECTOR_CHECK_STAGES: only the pyramid detectors");
        const FeatureMaps maps = backbone->forward(batch.tensors);
        for (const auto& [name, f] : maps) out.emplace_back("features." + name, f.contiguous());
        if (auto* rcnn = dynamic_cast<FasterRcnnImpl*>(model.get())) {
          const RpnResult r = rcnn->rpn->forward(batch, maps, nullptr, false);
          for (size_t i = 0; i < r.proposals.size(); ++i)
            out.emplace_back("proposals." + std::to_string(i), r.proposals[i].contiguous());
        }
      } else if (cmd == "detect") {
        model->eval();
        torch::NoGradGuard noGrad;
        const std::vector<Detections> d = model->detect(images);
        for (size_t i = 0; i < d.size(); ++i) {
          out.emplace_back("boxes." + std::to_string(i), d[i].boxes.cpu().contiguous());
          out.emplace_back("scores." + std::to_string(i), d[i].scores.cpu().contiguous());
          out.emplace_back("labels." + std::to_string(i), d[i].labels.cpu().contiguous());
          if (d[i].masks.defined()) out.emplace_back("masks." + std::to_string(i), d[i].masks.cpu().contiguous());
        }
      } else {
        model->train();
        torch::manual_seed(std::stoull(argv[6]));
        const bool bf16 = std::getenv("DETECTOR_CHECK_AUTOCAST") != nullptr;
        DetectionLosses losses;
        {
          AutocastScope autocast(device.type(), bf16, torch::kBFloat16);
          losses =
              masks.empty() ? model->losses(images, boxes, labels) : model->maskLosses(images, boxes, labels, masks);
        }
        torch::Tensor total;
        for (const auto& [name, loss] : losses) {
          out.emplace_back(name, loss.detach().reshape({1}).cpu().contiguous());
          total = total.defined() ? total + loss : loss;
        }
        total.backward();
        for (const auto& p : model->named_parameters())
          if (p.value().grad().defined()) out.emplace_back("grad." + p.key(), p.value().grad().cpu().contiguous());
      }
      writeFileAtomically(argv[5], safetensorsBytes(out));
      return 0;
    }
    std::cerr << "usage: detector_check detect|losses|names ...\n";
    return 64;
  } catch (const ModelError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
}
