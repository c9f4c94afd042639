// Semantic segmentation's settings (task.kind segmentation, issue 61): the
// masks' ignored value and class names, and the segmenter's sizes and
// auxiliary head (model.segmenter.*, torchvision's references/segmentation).
// The masks themselves are data.annotations (settings_schema_detection.cpp);
// the readers are studio/segmentation_files.h and studio/mask_file.h, the
// models engine/src/segmentation/.
#include "schema_builder.h"
#include "studio/model_kinds.h"

namespace studio::schema {

void addSegmentationSettings(Fields& add) {
  const std::string data = "Data", model = "Model";
  add.forks = false;  // what the masks mean and the sizes the weights learnt at
  const Rule segmentation{[](const TrainConfig& c) { return c.task.kind == TaskKind::segmentation; },
                          "task.kind segmentation"};
  when(range(add(SETTING(data.ignore_index), data, "Mask value ignored", T::Int,
                 "The mask value that is no class (VOC's object borders are 255): its pixels are left out of the "
                 "loss and the figures, as torchvision's references do (ignore_index)."),
             between(0, 255)),
       segmentation, true);
  when(add(SETTING(data.class_names), data, "Class names", T::TextList,
           "The classes' names in the order of their mask values, 0 first (\"background, road, car\"). Empty: a "
           "classes.txt beside the masks (a name a line), or VOC's 21 classes for Pascal VOC's folder."),
       segmentation, true);
  const Rule segmenter{[](const TrainConfig& c) { return isModel(c.model.kind, ModelFamily::segmenter); },
                       "a segmentation model.kind (" + segmenterKindsText() + ")"};
  when(range(add(SETTING(model.segmenter.base_size), model, "Segmenter: base size (px)", T::Int,
                 "Training resizes each image's shorter side to a random size from half this to twice this; "
                 "evaluation and prediction resize it to this (torchvision's references: 520)."),
             between(16, 4096)),
       segmenter, true);
  when(range(add(SETTING(model.segmenter.crop_size), model, "Segmenter: crop size (px)", T::Int,
                 "Training takes a random square of this side from each resized image (padded with the ignored "
                 "value where smaller; torchvision's references: 480)."),
             between(16, 4096)),
       segmenter, true);
  when(add(SETTING(model.segmenter.aux_loss), model, "Segmenter: auxiliary loss", T::Bool,
           "An auxiliary head on an earlier stage whose loss counts 0.5 in training (torchvision's aux_loss), for "
           "FCN and DeepLabV3; evaluation and prediction use the main head."),
       Rule{[](const TrainConfig& c) {
              return isModel(c.model.kind, ModelFamily::segmenter) && segmenterHasAux(c.model.kind);
            },
            "a segmentation model.kind with an auxiliary head (deeplabv3_*, fcn_resnet50)"},
       true);
}

}  // namespace studio::schema
