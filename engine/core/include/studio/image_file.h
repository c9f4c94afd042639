#pragma once
// Reading and writing image files with Debian's maintained decoders: libpng
// for PNG, TurboJPEG (libjpeg-turbo) for JPEG, and TurboJPEG's loader for BMP
// and binary PGM/PPM.
// The kind is told by the file's first bytes, not its name.
//
// Pixels come out as Pillow gives them, so a Python reference can check them:
// 8 bits per channel (16-bit PNG keeps the high byte), palettes expanded,
// alpha dropped (not blended), JPEG with the accurate IDCT and fancy
// upsampling; colour to gray is ITU-R 601-2 luma with Pillow's rounding,
// L = (R*19595 + G*38470 + B*7471 + 0x8000) >> 16 (Pillow, src/libImaging/
// Convert.c), and gray to colour repeats the value.
// Torch-free. Thread: free functions, safe on any number of threads at once.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace studio {

struct Image {
  int64_t height = 0, width = 0, channels = 0;  // channels: 1 or 3
  std::vector<uint8_t> pixels;                  // height x width x channels, row-major
};

struct ImageHeader {
  int64_t height = 0, width = 0, channels = 0;  // as stored (colour: 3)
  std::string kind;                             // png | jpeg | bmp | pnm
};

// What an image is decoded for: resized to height x width, squashed to it
// (cover false) or, keeping its aspect, scaled to cover it and then
// centre-cropped (cover true). {0, 0}: the image as stored.
struct ImageFit {
  int64_t height = 0, width = 0;
  bool cover = false;
};

// The size an image of h x w is resized to before a fit's centre crop:
// squashed, the fit's; covering, torchvision's Resize of the shorter side
// (the longer side scaled and floored, as transforms.v2.Resize([S])), the
// side that binds being the fit's.
std::pair<int64_t, int64_t> resizedSizeFor(int64_t h, int64_t w, const ImageFit& fit);

// wantChannels 0: as stored; 1 or 3: converted. A JPEG larger than twice the
// fit's resized size decodes at the smallest DCT scale (1/2, 1/4 or 1/8) that
// keeps it at least that size, as Pillow's Image.draft(None, size) chooses
// it: min(w // W, h // H) rounded down to 8, 4, 2 or 1. Throws DataError
// naming the file and what is wrong with it (truncated, not an image, too large).
Image decodeImageFile(const std::string& path, int wantChannels = 0, const ImageFit& fit = {});
Image decodeImage(const std::string& bytes, const std::string& path, int wantChannels = 0, const ImageFit& fit = {});
ImageHeader readImageHeader(const std::string& path);

// .png .jpg .jpeg .bmp .pgm .ppm, any case.
bool isImageFileName(const std::string& name);

// Writing (test fixtures, evaluation thumbnails). Throw IoError naming the file.
std::string encodePng(const Image& image);
std::string encodeJpeg(const Image& image, int quality = 90);
void writePngFile(const std::string& path, const Image& image);
void writeJpegFile(const std::string& path, const Image& image, int quality = 90);

}  // namespace studio
