#include "data_files/png_read.h"

#include <png.h>

#include <csetjmp>
#include <cstdio>
#include <cstring>

namespace studio::png_read {
namespace {

// libpng's errors longjmp: the function that calls setjmp holds no object
// with a destructor.

void readBytes(png_structp png, png_bytep out, size_t n) {
  auto* src = static_cast<Source*>(png_get_io_ptr(png));
  if (src->pos + n > src->size) png_error(png, "the file ends early (truncated)");
  std::memcpy(out, src->data + src->pos, n);
  src->pos += n;
}

void onError(png_structp png, png_const_charp text) {
  auto* src = static_cast<Source*>(png_get_error_ptr(png));
  std::snprintf(src->message, sizeof src->message, "%s", text);
  png_longjmp(png, 1);
}

void onWarning(png_structp, png_const_charp) {}

}  // namespace

std::string colorTypeName(int colorType) {
  switch (colorType) {
    case PNG_COLOR_TYPE_GRAY:
      return "gray";
    case PNG_COLOR_TYPE_PALETTE:
      return "palette";
    case PNG_COLOR_TYPE_RGB:
      return "RGB colour";
    case PNG_COLOR_TYPE_RGB_ALPHA:
      return "RGB colour with alpha";
    case PNG_COLOR_TYPE_GRAY_ALPHA:
      return "gray with alpha";
    default:
      return "colour type " + std::to_string(colorType);
  }
}

bool read(Source* src, Pixels* out, Want want) {
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, src, onError, onWarning);
  if (!png) {
    std::snprintf(src->message, sizeof src->message, "out of memory");
    return false;
  }
  png_infop info = png_create_info_struct(png);
  unsigned char* volatile buffer = nullptr;
  png_bytep* volatile rows = nullptr;
  if (setjmp(png_jmpbuf(png))) {
    std::free(buffer);
    std::free(rows);
    png_destroy_read_struct(&png, &info, nullptr);
    return false;
  }
  png_set_user_limits(png, static_cast<png_uint_32>(kMaxSide), static_cast<png_uint_32>(kMaxSide));
  png_set_read_fn(png, src, readBytes);
  png_read_info(png, info);
  out->width = png_get_image_width(png, info);
  out->height = png_get_image_height(png, info);
  out->colorType = png_get_color_type(png, info);
  out->bitDepth = png_get_bit_depth(png, info);
  if (want == Want::Header) {
    out->channels = (out->colorType & PNG_COLOR_MASK_COLOR) ? 3 : 1;
    png_destroy_read_struct(&png, &info, nullptr);
    return true;
  }
  if (out->width * out->height > kMaxPixels) png_error(png, "the image is too large");
  if (want == Want::Image) {
    // As Pillow: palettes and low bit depths expanded, 16 bits to their high
    // byte, alpha (and tRNS transparency) dropped.
    png_set_expand(png);
    png_set_strip_16(png);
    png_set_strip_alpha(png);
  } else {
    if (out->colorType != PNG_COLOR_TYPE_GRAY && out->colorType != PNG_COLOR_TYPE_PALETTE) {
      std::snprintf(src->message, sizeof src->message, "%s",
                    (colorTypeName(out->colorType) + ", not one value per pixel").c_str());
      png_destroy_read_struct(&png, &info, nullptr);
      return false;
    }
    if (out->colorType == PNG_COLOR_TYPE_PALETTE)
      png_set_packing(png);  // one byte per index, the indices kept
    else if (out->bitDepth < 8)
      png_set_expand_gray_1_2_4_to_8(png);  // scaled to 8 bits, as Pillow's L (1 bit: undone below)
    else if (out->bitDepth == 16)
      png_set_swap(png);  // little-endian: the host's order
  }
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  out->channels = png_get_channels(png, info);
  out->bytesPerValue = png_get_bit_depth(png, info) == 16 ? 2 : 1;
  const size_t rowBytes = png_get_rowbytes(png, info);
  buffer = static_cast<unsigned char*>(std::malloc(rowBytes * out->height));
  rows = static_cast<png_bytep*>(std::malloc(sizeof(png_bytep) * out->height));
  if (!buffer || !rows) png_error(png, "out of memory");
  for (int64_t y = 0; y < out->height; ++y) rows[y] = buffer + y * rowBytes;
  png_read_image(png, rows);
  png_read_end(png, nullptr);
  std::free(rows);
  png_destroy_read_struct(&png, &info, nullptr);
  if (want == Want::Mask && out->colorType == PNG_COLOR_TYPE_GRAY && out->bitDepth == 1)
    for (int64_t i = 0; i < out->width * out->height; ++i) buffer[i] = buffer[i] != 0;  // Pillow's mode 1
  out->data.reset(buffer);
  return true;
}

std::pair<int64_t, int64_t> headerSize(const std::string& bytes) {
  if (bytes.size() < 24 || std::memcmp(bytes.data() + 12, "IHDR", 4) != 0) return {-1, -1};
  auto be32 = [&](size_t at) {
    int64_t v = 0;
    for (size_t k = 0; k < 4; ++k) v = (v << 8) | static_cast<unsigned char>(bytes[at + k]);
    return v;
  };
  return {be32(16), be32(20)};
}

}  // namespace studio::png_read
