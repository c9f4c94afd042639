#pragma once
// What the callers of the annotation readers (studio/box_annotations.h)
// share: data.on_bad_box as the readers take it, and an image's own size
// against the size its annotations give. The data plan (training) and
// the Predictor of a detection run (predict --annotations) both check through these.
// Torch-free. Thread: free functions, any thread.

#include <cstdint>
#include <string>

#include "studio/box_annotations.h"
#include "studio/train_config.h"

namespace studio {

// data.on_bad_box as the annotation readers take it.
BadBoxes badBoxesOf(OnBadBox setting);

// Throws DataError when the image `file` is not height x width pixels as its
// annotations (image) say: its boxes would not fit it.
void checkAnnotatedSize(const AnnotatedImage& image, const std::string& file, int64_t height, int64_t width);

}  // namespace studio
