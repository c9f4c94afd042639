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
#include <vector>

namespace studio {

struct Image {
  int64_t height = 0, width = 0, channels = 0;  // channels: 1 or 3
  std::vector<uint8_t> pixels;                  // height x width x channels, row-major
};

struct ImageHeader {
  int64_t height = 0, width = 0, channels = 0;  // as stored (colour: 3)
  std::string kind;                              // png | jpeg | bmp | pnm
};

// wantChannels 0: as stored; 1 or 3: converted. Throws DataError naming the
// file and what is wrong with it (truncated, not an image, too large).
Image decodeImageFile(const std::string& path, int wantChannels = 0);
Image decodeImage(const std::string& bytes, const std::string& path, int wantChannels = 0);
ImageHeader readImageHeader(const std::string& path);

// .png .jpg .jpeg .bmp .pgm .ppm, any case.
bool isImageFileName(const std::string& name);

// Writing (test fixtures, evaluation thumbnails). Throw IoError naming the file.
std::string encodePng(const Image& image);
std::string encodeJpeg(const Image& image, int quality = 90);
void writePngFile(const std::string& path, const Image& image);
void writeJpegFile(const std::string& path, const Image& image, int quality = 90);

}  // namespace studio
