#pragma once
// Image files decoded in parallel on all cores into one uint8 tensor
// [N, C, H, W] (resized with antialiased bilinear interpolation, as
// torch.nn.functional.interpolate(mode="bilinear", antialias=True)), kept in
// a cache under the user's cache folder. With `cover`, each image keeps its
// aspect: it is scaled to cover H x W (torchvision's Resize of the shorter
// side) and centre-cropped (CenterCrop), the photo recipe's stored size.
// JPEGs decode at the smallest DCT scale that keeps the resized size
// (studio/image_file.h). The cache: <key>.u8 (the pixels, memory-mapped
// when used, so a set larger than memory streams from the page cache) and
// <key>.json (written last: its presence marks a complete entry). The key is
// the SHA-256 of the files' paths, sizes and modification times and the
// size, fit and channels asked for: any change to a file decodes afresh.
// The folder: $STUDIO_DATA_CACHE, else $STUDIO_CACHE/decoded, else
// $XDG_CACHE_HOME/training-studio/decoded, else ~/.cache/training-studio/decoded.
// Thread: decodeImages on the engine thread (it runs its own workers).

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <torch/types.h>

#include "studio/image_file.h"

namespace studio {

// Progress of a long step, for the front-end; cancelled() stops it.
struct LoadProgress {
  std::function<void(const std::string& phase, int64_t done, int64_t total)> report;
  std::function<bool()> cancelled;
};

// A load stopped by the person (Stop while decoding).
struct LoadCancelled : std::runtime_error {
  LoadCancelled() : std::runtime_error("stopped while loading the data") {}
};

struct DecodeRequest {
  std::vector<std::string> files;
  int64_t channels = 0, height = 0, width = 0;
  bool cover = false;         // aspect kept, centre-cropped (else squashed)
  bool skipBadFiles = false;  // data.on_bad_file skip
};

struct DecodedImages {
  torch::Tensor images;                 // uint8 [n, C, H, W]; rows of skipped files are zero
  std::vector<int64_t> bad;             // files skipped (indices into the request)
  std::vector<std::string> badReasons;  // why, in the same order
  bool fromCache = false;
  std::string cacheFile;  // "" when the cache could not be written
  double seconds = 0;
};

std::string decodedCacheFolder();

// Throws DataError naming the first file that cannot be read (unless
// skipBadFiles), LoadCancelled when cancelled.
DecodedImages decodeImages(const DecodeRequest& request, const LoadProgress& progress);

// The centre height x width of images [..., H, W], at torchvision's
// CenterCrop offsets (Python's round of half the margin: halves to even); a view.
torch::Tensor centreCrop(const torch::Tensor& x, int64_t height, int64_t width);

// A decoded image as the cache would hold it at the fit: uint8 [C, H, W].
torch::Tensor fitImage(const Image& image, const ImageFit& fit);

// One file as the cache holds it: uint8 [C, H, W].
torch::Tensor decodeImageTensor(const std::string& path, int64_t channels, int64_t height, int64_t width,
                                bool cover = false);
// The same, written to dst (C x H x W bytes); returns the file's own height and
// width. Throws DataError as decodeImageFile does. Any thread.
std::pair<int64_t, int64_t> decodeImageInto(const std::string& path, int64_t channels, int64_t height, int64_t width,
                                            uint8_t* dst, bool cover = false);

}  // namespace studio
