#include "studio/image_file.h"

#include <png.h>
#include <turbojpeg.h>

#include <algorithm>
#include <cctype>
#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "data_files/png_read.h"
#include "studio/errors.h"
#include "studio/file_io.h"

namespace studio {
namespace {

// The decoders' size limits, one for every kind (data_files/png_read.h).
using png_read::kMaxPixels;
using png_read::kMaxSide;

std::string sizeText(int64_t w, int64_t h) { return std::to_string(w) + "x" + std::to_string(h); }

void checkSize(int64_t w, int64_t h, const std::string& path) {
  if (w <= 0 || h <= 0) throw DataError("image file " + path + " has no pixels (" + sizeText(w, h) + ")");
  if (w > kMaxSide || h > kMaxSide || w * h > kMaxPixels)
    throw DataError("image file " + path + " is too large to train on (" + sizeText(w, h) +
                    " pixels); shrink it first");
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string kindOf(const std::string& bytes) {
  if (bytes.size() >= 8 && std::memcmp(bytes.data(), "\x89PNG\r\n\x1a\n", 8) == 0) return "png";
  if (bytes.size() >= 3 && std::memcmp(bytes.data(), "\xFF\xD8\xFF", 3) == 0) return "jpeg";
  if (bytes.size() >= 2 && std::memcmp(bytes.data(), "BM", 2) == 0) return "bmp";
  if (bytes.size() >= 2 && bytes[0] == 'P' && (bytes[1] == '5' || bytes[1] == '6')) return "pnm";
  return "";
}

// --- PNG (data_files/png_read.h) ---

void checkPngHeaderSize(const std::string& bytes, const std::string& path) {
  const auto [w, h] = png_read::headerSize(bytes);
  if (w >= 0) checkSize(w, h, path);
}

Image decodePng(const std::string& bytes, const std::string& path) {
  checkPngHeaderSize(bytes, path);
  png_read::Source src(bytes);
  png_read::Pixels px;
  if (!png_read::read(&src, &px, png_read::Want::Image))
    throw DataError("image file " + path + " is not a readable PNG: " + src.message);
  if (px.channels != 1 && px.channels != 3)
    throw DataError("image file " + path + " has " + std::to_string(px.channels) + " channels after decoding");
  Image img;
  img.width = px.width;
  img.height = px.height;
  img.channels = px.channels;
  img.pixels.assign(px.data.get(), px.data.get() + img.width * img.height * img.channels);
  return img;
}

// --- JPEG and BMP (TurboJPEG) ---

struct TjHandle {
  tjhandle h = nullptr;
  explicit TjHandle(bool compress) : h(compress ? tjInitCompress() : tjInitDecompress()) {}
  ~TjHandle() {
    if (h) tjDestroy(h);
  }
};

tjhandle decompressor() {
  thread_local TjHandle handle(false);
  return handle.h;
}

// Pillow's JpegImageFile.draft: the largest of 8, 4, 2, 1 that is at most
// min(w // W, h // H) for the wanted size W x H.
int draftScale(int w, int h, const ImageFit& fit) {
  if (fit.height <= 0 || fit.width <= 0) return 1;
  const auto [rh, rw] = resizedSizeFor(h, w, fit);
  const int64_t scale = std::min<int64_t>(w / std::max<int64_t>(1, rw), h / std::max<int64_t>(1, rh));
  for (int a : {8, 4, 2})
    if (scale >= a) return a;
  return 1;
}

Image decodeJpeg(const std::string& bytes, const std::string& path, const ImageFit& fit) {
  tjhandle tj = decompressor();
  if (!tj) throw DataError("cannot start the JPEG decoder for " + path);
  const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
  int w = 0, h = 0, subsamp = 0, colorspace = 0;
  if (tjDecompressHeader3(tj, data, bytes.size(), &w, &h, &subsamp, &colorspace) != 0)
    throw DataError("image file " + path + " is not a readable JPEG: " + tjGetErrorStr2(tj));
  checkSize(w, h, path);
  // At a reduced DCT scale the decoder never builds the full-size image.
  const int scale = draftScale(w, h, fit);
  w = (w + scale - 1) / scale;
  h = (h + scale - 1) / scale;
  const bool gray = colorspace == TJCS_GRAY;
  const bool cmyk = colorspace == TJCS_CMYK || colorspace == TJCS_YCCK;
  const int pf = gray ? TJPF_GRAY : cmyk ? TJPF_CMYK : TJPF_RGB;
  std::vector<uint8_t> buf(static_cast<size_t>(w) * h * tjPixelSize[pf]);
  // Accurate IDCT and fancy upsampling, as Pillow; a warning (a truncated or
  // damaged file) is an error, as Pillow's "image file is truncated".
  if (tjDecompress2(tj, data, bytes.size(), buf.data(), w, 0, h, pf, TJFLAG_ACCURATEDCT | TJFLAG_STOPONWARNING) != 0)
    throw DataError("image file " + path + " is a damaged JPEG: " + tjGetErrorStr2(tj));
  Image img;
  img.width = w;
  img.height = h;
  if (gray) {
    img.channels = 1;
    img.pixels = std::move(buf);
  } else if (!cmyk) {
    img.channels = 3;
    img.pixels = std::move(buf);
  } else {
    // Adobe's inverted CMYK, as stored by Photoshop: R = C * K / 255.
    img.channels = 3;
    img.pixels.resize(static_cast<size_t>(w) * h * 3);
    for (size_t i = 0, n = static_cast<size_t>(w) * h; i < n; ++i) {
      const unsigned k = buf[i * 4 + 3];
      for (int c = 0; c < 3; ++c) img.pixels[i * 3 + c] = static_cast<uint8_t>(buf[i * 4 + c] * k / 255);
    }
  }
  return img;
}

int64_t le32(const std::string& b, size_t at) {
  return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint8_t>(b[at])) |
                              static_cast<uint32_t>(static_cast<uint8_t>(b[at + 1])) << 8 |
                              static_cast<uint32_t>(static_cast<uint8_t>(b[at + 2])) << 16 |
                              static_cast<uint32_t>(static_cast<uint8_t>(b[at + 3])) << 24);
}

// TurboJPEG's loader allocates the pixels a BMP or PNM header declares before
// it reads them: the declared size is checked against the limits and the
// file's length first, so a 100-byte file cannot ask for gigabytes.
void checkDeclaredSize(const std::string& b, const std::string& path, const char* kind) {
  int64_t w = 0, h = 0, bytesPerPixel = 0;
  if (std::string(kind) == "BMP") {
    if (b.size() < 30) throw DataError("image file " + path + " is too short to be a BMP");
    w = le32(b, 18);
    h = std::llabs(le32(b, 22));
    const int64_t bits = static_cast<uint8_t>(b[28]) | static_cast<uint8_t>(b[29]) << 8;
    bytesPerPixel = std::max<int64_t>(bits / 8, 1);
    checkSize(w, h, path);
    if (bits >= 8 && (w * bits + 31) / 32 * 4 * h > static_cast<int64_t>(b.size()))
      throw DataError("image file " + path + " is truncated: its header declares " + sizeText(w, h) +
                      " pixels, more than the file holds");
  } else {
    // P5/P6: width, height and maximum as text, with # comments between.
    size_t at = 2;
    int64_t fields[3] = {0, 0, 0};
    for (int64_t& f : fields) {
      while (at < b.size() && (std::isspace(static_cast<unsigned char>(b[at])) || b[at] == '#')) {
        if (b[at] == '#')
          while (at < b.size() && b[at] != '\n') ++at;
        else
          ++at;
      }
      if (at >= b.size() || !std::isdigit(static_cast<unsigned char>(b[at])))
        throw DataError("image file " + path + " is not a readable PGM/PPM (its header is broken)");
      while (at < b.size() && std::isdigit(static_cast<unsigned char>(b[at])) && f < (int64_t(1) << 40))
        f = f * 10 + (b[at++] - '0');
    }
    w = fields[0];
    h = fields[1];
    bytesPerPixel = (b[1] == '6' ? 3 : 1) * (fields[2] > 255 ? 2 : 1);
    checkSize(w, h, path);
    if (w * h * bytesPerPixel > static_cast<int64_t>(b.size()))
      throw DataError("image file " + path + " is truncated: its header declares " + sizeText(w, h) +
                      " pixels, more than the file holds");
  }
}

// BMP, and binary PGM/PPM, through TurboJPEG's loader.
Image decodeBmp(const std::string& path, const char* kind) {
  int w = 0, h = 0, pf = TJPF_UNKNOWN;
  unsigned char* px = tjLoadImage(path.c_str(), &w, 1, &h, &pf, 0);
  if (!px) throw DataError("image file " + path + " is not a readable " + kind + ": " + tjGetErrorStr2(nullptr));
  std::unique_ptr<unsigned char, decltype(&tjFree)> own(px, &tjFree);
  checkSize(w, h, path);
  Image img;
  img.width = w;
  img.height = h;
  const size_t n = static_cast<size_t>(w) * h;
  if (pf == TJPF_GRAY) {
    img.channels = 1;
    img.pixels.assign(px, px + n);
    return img;
  }
  if (pf < 0 || pf >= TJ_NUMPF || tjRedOffset[pf] < 0)
    throw DataError("image file " + path + " is a " + kind + " of a pixel format the studio does not read");
  img.channels = 3;
  img.pixels.resize(n * 3);
  const int size = tjPixelSize[pf], r = tjRedOffset[pf], g = tjGreenOffset[pf], b = tjBlueOffset[pf];
  for (size_t i = 0; i < n; ++i) {
    img.pixels[i * 3] = px[i * size + r];
    img.pixels[i * 3 + 1] = px[i * size + g];
    img.pixels[i * 3 + 2] = px[i * size + b];
  }
  return img;
}

Image convertChannels(Image img, int want) {
  if (want == 0 || want == img.channels) return img;
  const size_t n = static_cast<size_t>(img.width * img.height);
  std::vector<uint8_t> out(n * static_cast<size_t>(want));
  if (want == 1) {
    for (size_t i = 0; i < n; ++i) {
      const uint32_t r = img.pixels[i * 3], g = img.pixels[i * 3 + 1], b = img.pixels[i * 3 + 2];
      out[i] = static_cast<uint8_t>((r * 19595 + g * 38470 + b * 7471 + 0x8000) >> 16);
    }
  } else {
    for (size_t i = 0; i < n; ++i) out[i * 3] = out[i * 3 + 1] = out[i * 3 + 2] = img.pixels[i];
  }
  img.pixels = std::move(out);
  img.channels = want;
  return img;
}

}  // namespace

bool isImageFileName(const std::string& name) {
  const auto dot = name.rfind('.');
  if (dot == std::string::npos) return false;
  const std::string ext = lower(name.substr(dot + 1));
  return ext == "png" || ext == "jpg" || ext == "jpeg" || ext == "bmp" || ext == "pgm" || ext == "ppm";
}

std::pair<int64_t, int64_t> resizedSizeFor(int64_t h, int64_t w, const ImageFit& fit) {
  if (fit.height <= 0 || fit.width <= 0) return {h, w};
  if (!fit.cover || h <= 0 || w <= 0) return {fit.height, fit.width};
  // The binding side takes the fit's length; the other is scaled and floored
  // (for a square fit, torchvision's Resize(S) of the shorter side).
  if (h * fit.width >= w * fit.height) return {std::max(fit.height, fit.width * h / w), fit.width};
  return {fit.height, std::max(fit.width, fit.height * w / h)};
}

Image decodeImage(const std::string& bytes, const std::string& path, int wantChannels, const ImageFit& fit) {
  const std::string kind = kindOf(bytes);
  Image img;
  if (kind == "png")
    img = decodePng(bytes, path);
  else if (kind == "jpeg")
    img = decodeJpeg(bytes, path, fit);
  else if (kind == "bmp" || kind == "pnm") {
    const char* name = kind == "bmp" ? "BMP" : "PGM/PPM";
    checkDeclaredSize(bytes, path, name);
    img = decodeBmp(path, name);
  } else if (bytes.empty())
    throw DataError("image file " + path + " is empty");
  else
    throw DataError("image file " + path +
                    " is not a PNG, JPEG, BMP, PGM or PPM image (its first bytes say otherwise)");
  checkSize(img.width, img.height, path);
  return convertChannels(std::move(img), wantChannels);
}

Image decodeImageFile(const std::string& path, int wantChannels, const ImageFit& fit) {
  std::string bytes;
  try {
    bytes = readFileBytes(path, "image file");
  } catch (const InputError& e) {
    throw DataError(e.what());
  }
  return decodeImage(bytes, path, wantChannels, fit);
}

ImageHeader readImageHeader(const std::string& path) {
  std::string bytes;
  try {
    bytes = readFileBytes(path, "image file");
  } catch (const InputError& e) {
    throw DataError(e.what());
  }
  ImageHeader h;
  h.kind = kindOf(bytes);
  if (h.kind == "png") {
    checkPngHeaderSize(bytes, path);
    png_read::Source src(bytes);
    png_read::Pixels px;
    if (!png_read::read(&src, &px, png_read::Want::Header))
      throw DataError("image file " + path + " is not a readable PNG: " + src.message);
    h.width = px.width;
    h.height = px.height;
    h.channels = px.channels;
  } else if (h.kind == "jpeg") {
    tjhandle tj = decompressor();
    int w = 0, ht = 0, subsamp = 0, colorspace = 0;
    if (!tj || tjDecompressHeader3(tj, reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), &w, &ht,
                                   &subsamp, &colorspace) != 0)
      throw DataError("image file " + path + " is not a readable JPEG");
    h.width = w;
    h.height = ht;
    h.channels = colorspace == TJCS_GRAY ? 1 : 3;
  } else {
    const Image img = decodeImage(bytes, path, 0);  // BMP, PGM, PPM: read whole
    h.width = img.width;
    h.height = img.height;
    h.channels = img.channels;
  }
  checkSize(h.width, h.height, path);
  return h;
}

std::string encodePng(const Image& img) {
  png_image image;
  std::memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  image.width = static_cast<png_uint_32>(img.width);
  image.height = static_cast<png_uint_32>(img.height);
  image.format = img.channels == 1 ? PNG_FORMAT_GRAY : PNG_FORMAT_RGB;
  png_alloc_size_t size = 0;
  if (!png_image_write_to_memory(&image, nullptr, &size, 0, img.pixels.data(), 0, nullptr))
    throw IoError(std::string("cannot encode a PNG: ") + image.message);
  std::string out(size, '\0');
  if (!png_image_write_to_memory(&image, out.data(), &size, 0, img.pixels.data(), 0, nullptr))
    throw IoError(std::string("cannot encode a PNG: ") + image.message);
  out.resize(size);
  png_image_free(&image);
  return out;
}

std::string encodeJpeg(const Image& img, int quality) {
  TjHandle tj(true);
  if (!tj.h) throw IoError("cannot start the JPEG encoder");
  unsigned char* jpeg = nullptr;
  unsigned long size = 0;
  const int pf = img.channels == 1 ? TJPF_GRAY : TJPF_RGB;
  const int subsamp = img.channels == 1 ? TJSAMP_GRAY : TJSAMP_420;
  if (tjCompress2(tj.h, img.pixels.data(), static_cast<int>(img.width), 0, static_cast<int>(img.height), pf, &jpeg,
                  &size, subsamp, quality, TJFLAG_ACCURATEDCT) != 0)
    throw IoError(std::string("cannot encode a JPEG: ") + tjGetErrorStr2(tj.h));
  std::string out(reinterpret_cast<const char*>(jpeg), size);
  tjFree(jpeg);
  return out;
}

void writePngFile(const std::string& path, const Image& image) { writeFileAtomically(path, encodePng(image)); }

void writeJpegFile(const std::string& path, const Image& image, int quality) {
  writeFileAtomically(path, encodeJpeg(image, quality));
}

}  // namespace studio
