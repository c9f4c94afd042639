#pragma once
// A whole text as one finite decimal number, as the annotation readers take
// their numbers (YOLO's label lines, VOC's <xmin>...): std::from_chars, so no
// hex (std::stod read "0x50" as 80, issue 59 item 11), no leading '+', and
// no "inf" or "nan", which it would parse.
// Torch-free. Thread: any.

#include <charconv>
#include <cmath>
#include <string_view>

namespace studio {

inline bool finiteDecimal(std::string_view text, double& out) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
  return error == std::errc() && end == text.data() + text.size() && std::isfinite(out);
}

}  // namespace studio
