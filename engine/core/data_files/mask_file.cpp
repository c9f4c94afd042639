#include "studio/mask_file.h"

#include <png.h>

#include <cstring>

#include "data_files/png_read.h"
#include "studio/errors.h"
#include "studio/file_io.h"

namespace studio {

Mask decodeMask(const std::string& bytes, const std::string& path) {
  if (bytes.size() < 8 || std::memcmp(bytes.data(), "\x89PNG\r\n\x1a\n", 8) != 0)
    throw DataError("mask " + path + " is not a PNG file (masks are palette or gray PNG files of class indices)");
  png_read::Source src(bytes);
  png_read::Pixels px;
  if (!png_read::read(&src, &px, png_read::Want::Mask))
    throw DataError("mask " + path + " is not a readable mask: " + src.message +
                    " (a mask is a palette or gray PNG whose values are class indices)");
  Mask m;
  m.height = px.height;
  m.width = px.width;
  const int64_t n = m.height * m.width;
  m.values.resize(static_cast<size_t>(n));
  if (px.bytesPerValue == 1) {
    std::memcpy(m.values.data(), px.data.get(), static_cast<size_t>(n));
    return m;
  }
  const auto* wide = reinterpret_cast<const uint16_t*>(px.data.get());
  for (int64_t i = 0; i < n; ++i) {
    if (wide[i] > 255)
      throw DataError("mask " + path + " has the value " + std::to_string(wide[i]) + " (at x " +
                      std::to_string(i % m.width) + ", y " + std::to_string(i / m.width) +
                      "): a 16-bit mask's values must be at most 255");
    m.values[static_cast<size_t>(i)] = static_cast<uint8_t>(wide[i]);
  }
  return m;
}

Mask decodeMaskFile(const std::string& path) {
  std::string bytes;
  try {
    bytes = readFileBytes(path, "mask");
  } catch (const InputError& e) {
    throw DataError(e.what());
  }
  return decodeMask(bytes, path);
}

std::string maskProblem(const Mask& mask, const std::string& path, int64_t imageHeight, int64_t imageWidth,
                        int64_t classes, int ignoreIndex) {
  auto size = [](int64_t w, int64_t h) { return std::to_string(w) + "x" + std::to_string(h); };
  if (mask.height != imageHeight || mask.width != imageWidth)
    return "mask " + path + " is " + size(mask.width, mask.height) + " but its image is " +
           size(imageWidth, imageHeight) + " (width x height): a mask has its image's size";
  for (size_t i = 0; i < mask.values.size(); ++i) {
    const int v = mask.values[i];
    if (v < classes || v == ignoreIndex) continue;
    const int64_t at = static_cast<int64_t>(i);
    return "mask " + path + " has the value " + std::to_string(v) + " (at x " + std::to_string(at % mask.width) +
           ", y " + std::to_string(at / mask.width) + "): the classes are 0 to " + std::to_string(classes - 1) +
           (ignoreIndex >= 0 ? ", and " + std::to_string(ignoreIndex) + " is the ignore index" : std::string()) +
           " (data.ignore_index)";
  }
  return "";
}

std::string encodeMaskPng(const Mask& mask, const std::vector<Rgb>& palette) {
  std::vector<uint8_t> colormap(256 * 3);
  for (int i = 0; i < 256; ++i)
    for (int c = 0; c < 3; ++c)
      colormap[static_cast<size_t>(i * 3 + c)] = static_cast<size_t>(i) < palette.size()
                                                     ? palette[static_cast<size_t>(i)][static_cast<size_t>(c)]
                                                     : static_cast<uint8_t>(i);
  png_image image;
  std::memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  image.width = static_cast<png_uint_32>(mask.width);
  image.height = static_cast<png_uint_32>(mask.height);
  image.format = PNG_FORMAT_RGB_COLORMAP;
  image.colormap_entries = 256;
  png_alloc_size_t size = 0;
  if (!png_image_write_to_memory(&image, nullptr, &size, 0, mask.values.data(), 0, colormap.data()))
    throw IoError(std::string("cannot encode a mask PNG: ") + image.message);
  std::string out(size, '\0');
  if (!png_image_write_to_memory(&image, out.data(), &size, 0, mask.values.data(), 0, colormap.data()))
    throw IoError(std::string("cannot encode a mask PNG: ") + image.message);
  out.resize(size);
  png_image_free(&image);
  return out;
}

void writeMaskPng(const std::string& path, const Mask& mask, const std::vector<Rgb>& palette) {
  writeFileAtomically(path, encodeMaskPng(mask, palette));
}

const std::vector<Rgb>& vocPalette() {
  static const std::vector<Rgb> palette = [] {
    std::vector<Rgb> p(256);
    for (int i = 0; i < 256; ++i) {
      int r = 0, g = 0, b = 0, c = i;
      for (int j = 0; j < 8; ++j, c >>= 3) {
        r |= ((c >> 0) & 1) << (7 - j);
        g |= ((c >> 1) & 1) << (7 - j);
        b |= ((c >> 2) & 1) << (7 - j);
      }
      p[static_cast<size_t>(i)] = {static_cast<uint8_t>(r), static_cast<uint8_t>(g), static_cast<uint8_t>(b)};
    }
    return p;
  }();
  return palette;
}

}  // namespace studio
