#pragma once
// Reading run files in the tests; plain C++, so suites with and without Qt
// share it.
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace studio::test {

inline std::string readText(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline std::vector<std::string> readLines(const std::string& path) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace studio::test
