#pragma once
// A rate as people read it: samples (or images) per second with the digits
// that matter, 1234, 56.7 or 0.89. "%.0f" said "0 samples/s" of a slow run
// on the CPU (issue 60). Torch-free, header only. Thread: any.

#include <cstdio>
#include <string>

namespace studio {

inline std::string rateText(double perSecond) {
  char text[32];
  std::snprintf(text, sizeof text, perSecond >= 100 ? "%.0f" : perSecond >= 10 ? "%.1f" : "%.2f", perSecond);
  return text;
}

}  // namespace studio
