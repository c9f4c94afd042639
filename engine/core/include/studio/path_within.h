#pragma once
// Whether a path a data file names stays inside the folder it is read from,
// once links and ".." are followed (issue 59, item 14): the box readers,
// a YOLO data.yaml's splits and a targets table ask the same question.
// Torch-free. Thread: free functions, any thread.

#include <filesystem>
#include <system_error>

namespace studio {

// Absolute, links and ".." followed as far as the path exists (the rest
// normalised as written).
inline std::filesystem::path resolvedPath(const std::filesystem::path& p) {
  std::error_code ec;
  const std::filesystem::path c = std::filesystem::weakly_canonical(std::filesystem::absolute(p, ec), ec);
  return ec ? std::filesystem::absolute(p).lexically_normal() : c;
}

// `p` is `folder` or lies under it; both already resolved (resolvedPath).
inline bool isWithin(const std::filesystem::path& p, const std::filesystem::path& folder) {
  const std::filesystem::path rel = p.lexically_relative(folder);
  return !rel.empty() && *rel.begin() != "..";
}

}  // namespace studio
