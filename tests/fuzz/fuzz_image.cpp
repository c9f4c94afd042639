// Image files: PNG (libpng), JPEG (TurboJPEG), BMP, PGM and PPM (TurboJPEG's
// loader), decoded as stored and converted to 1 and 3 channels, and at the
// reduced DCT scales a small stored size picks (JPEG); and each input as a
// segmentation mask (studio/mask_file.h: one value per pixel), checked
// against an image of its size; and as COCO's compact RLE counts text
// (studio/coco_mask.h), decoded where it fits its size.
#include <stdexcept>

#include "fuzz_input.h"
#include "studio/coco_mask.h"
#include "studio/errors.h"
#include "studio/image_file.h"
#include "studio/mask_file.h"

using namespace studio;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::InputFile file(data, size);
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  for (int channels : {0, 1, 3}) {
    try {
      const Image img = decodeImage(bytes, file.path(), channels);
      if (static_cast<int64_t>(img.pixels.size()) != img.height * img.width * img.channels) std::abort();
    } catch (const DataError&) {
    }
  }
  for (const ImageFit fit : {ImageFit{3, 5, true}, ImageFit{1, 1, false}}) {
    try {
      const Image img = decodeImage(bytes, file.path(), 3, fit);
      if (static_cast<int64_t>(img.pixels.size()) != img.height * img.width * img.channels) std::abort();
    } catch (const DataError&) {
    }
  }
  try {
    const Mask m = decodeMask(bytes, file.path());
    if (static_cast<int64_t>(m.values.size()) != m.height * m.width) std::abort();
    (void)maskProblem(m, file.path(), m.height, m.width, 3, 255);
  } catch (const DataError&) {
  }
  try {
    const Rle r = rleFromString(bytes, 7, 9);
    if (rleDecode(r).size() != 63 || rleArea(r) > 63) std::abort();
    (void)rleBox(r);
    if (rleFromString(rleToString(r), 7, 9).counts != r.counts) std::abort();
  } catch (const std::invalid_argument&) {
  }
  try {
    (void)readImageHeader(file.path());
  } catch (const DataError&) {
  }
  return 0;
}
