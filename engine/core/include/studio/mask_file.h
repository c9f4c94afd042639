#pragma once
// Segmentation masks in PNG files: a class index per pixel, as torchvision's
// references/segmentation read them (np.array(Image.open(mask)) with
// Pillow): a palette PNG's indices, not its colours (the Pascal VOC
// SegmentationClass layout, 255 on the objects' borders), or gray values
// (8-bit as stored; 2- and 4-bit scaled to 8 bits, and 1-bit as 0 or 1, as
// Pillow opens them; 16-bit as stored, at most 255). A colour or alpha PNG
// is refused: its pixels are not one value each.
// Torch-free. Thread: free functions, any thread.

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace studio {

struct Mask {
  int64_t height = 0, width = 0;
  std::vector<uint8_t> values;  // height x width, row-major: a class, or the ignore index
};

// Throws DataError naming the file and what is wrong with it (not a PNG,
// truncated, colour, a 16-bit value past 255).
Mask decodeMaskFile(const std::string& path);
Mask decodeMask(const std::string& bytes, const std::string& path);

// What is wrong with a mask for an image of height x width and `classes`
// classes, where ignoreIndex marks pixels that count for nothing (-1: none):
// "" when nothing; else words naming the file, as "mask m.png is 20x30 but
// its image is 21x30" or "mask m.png has the value 7 (at x 3, y 9): the
// classes are 0 to 4, and 255 is the ignore index".
std::string maskProblem(const Mask& mask, const std::string& path, int64_t imageHeight, int64_t imageWidth,
                        int64_t classes, int ignoreIndex);

// A palette PNG of the mask (each value its palette entry, as VOC's files):
// palette colours for the values that have one, gray for the others.
using Rgb = std::array<uint8_t, 3>;
std::string encodeMaskPng(const Mask& mask, const std::vector<Rgb>& palette);
void writeMaskPng(const std::string& path, const Mask& mask, const std::vector<Rgb>& palette);

// Pascal VOC's colour map (its devkit's labelcolormap: class i's bits spread
// over the colour's high bits), 256 entries: 0 black, 255 (the border) cream.
const std::vector<Rgb>& vocPalette();

}  // namespace studio
