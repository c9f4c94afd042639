#pragma once
// libpng's decoding for image files (image_file.cpp: pixels as Pillow gives
// an RGB or L image) and segmentation masks (mask_file.cpp: the values
// Pillow's np.array(Image.open(mask)) gives, a palette's indices rather than
// its colours). One reader, so that both refuse the same damaged files with
// the same words.
// Torch-free. Thread: free functions, any thread.

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>

namespace studio::png_read {

// Larger images are refused before their pixels are allocated (image_file.cpp
// checks every kind's size against the same limits).
inline constexpr int64_t kMaxSide = 32768;
inline constexpr int64_t kMaxPixels = int64_t(1) << 28;

struct Source {
  explicit Source(const std::string& bytes)
      : data(reinterpret_cast<const unsigned char*>(bytes.data())), size(bytes.size()) {}
  const unsigned char* data;
  size_t size;
  size_t pos = 0;
  char message[256] = {0};  // what libpng found wrong, when read() returns false
};

enum class Want {
  Header,  // the size and channels only
  Image,   // as Pillow's RGB or L: palettes and low bit depths expanded, 16 bits to their high byte, alpha dropped
  Mask,    // one value per pixel as Pillow's P, L, 1 or I;16 (below); colour or alpha refused
};

struct Pixels {
  std::unique_ptr<unsigned char, decltype(&std::free)> data{nullptr, &std::free};
  int64_t width = 0, height = 0;
  int channels = 0;
  // Want::Mask: bytes per value (1, or 2 for 16-bit gray: host order), and
  // the file's colour type and bit depth as stored.
  int bytesPerValue = 1;
  int colorType = 0, bitDepth = 0;
};

// Want::Mask gives, per pixel, what Pillow's array of the image holds: a
// palette's index (any bit depth); 8-bit gray's value; 2- and 4-bit gray's
// value scaled to 8 bits (x 85, x 17: Pillow opens them as L); 1-bit gray's
// 0 or 1 (mode 1); 16-bit gray's value (I;16). Colour (RGB) and alpha (LA,
// RGBA) are refused with a message naming them.
// False with source->message set when the file cannot be read.
bool read(Source* source, Pixels* out, Want want);

// A PNG's width and height from its IHDR chunk, read before libpng (past its
// limits libpng says only "Invalid IHDR data"); {-1, -1} when there is none.
std::pair<int64_t, int64_t> headerSize(const std::string& bytes);

// PNG_COLOR_TYPE_*'s name as people say it: "RGB colour", "gray with alpha".
std::string colorTypeName(int colorType);

}  // namespace studio::png_read
