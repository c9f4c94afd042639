// COCO's bbox figures computed by the studio (studio/coco_eval.h) on a
// ground-truth file and a results file, timed: the reading apart from the
// evaluation, as bench/coco_eval_bench.sh times pycocotools'
// loadRes apart from evaluate + accumulate + summarize.
//   bench_coco_eval GROUND_TRUTH.json RESULTS.json
// Prints the 12 figures, one per line as "stat i value", then the seconds.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "studio/coco_eval.h"

using studio::CocoBox;
using Clock = std::chrono::steady_clock;

namespace {

nlohmann::json readJson(const char* path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(std::string("cannot read ") + path);
  return nlohmann::json::parse(in);
}

CocoBox boxOf(const nlohmann::json& a, bool truth) {
  CocoBox b;
  b.image = a.at("image_id").get<int64_t>();
  b.category = a.at("category_id").get<int64_t>();
  for (size_t i = 0; i < 4; ++i) b.box[i] = a.at("bbox").at(i).get<double>();
  b.area = truth && a.contains("area") ? a["area"].get<double>() : b.box[2] * b.box[3];
  if (truth) b.crowd = a.value("iscrowd", 0) != 0;
  if (!truth) b.score = a.at("score").get<double>();
  return b;
}

double seconds(Clock::time_point from) { return std::chrono::duration<double>(Clock::now() - from).count(); }

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: bench_coco_eval GROUND_TRUTH.json RESULTS.json\n";
    return 64;
  }
  try {
    const auto t0 = Clock::now();
    const nlohmann::json gt = readJson(argv[1]), dt = readJson(argv[2]);
    std::vector<int64_t> images;
    for (const auto& i : gt.at("images")) images.push_back(i.at("id").get<int64_t>());
    std::vector<CocoBox> truth, detections;
    for (const auto& a : gt.at("annotations")) truth.push_back(boxOf(a, true));
    for (const auto& d : dt) detections.push_back(boxOf(d, false));
    const double load = seconds(t0);
    const auto t1 = Clock::now();
    const studio::CocoStats s = studio::cocoEvaluate(images, truth, detections);
    const double evaluate = seconds(t1);
    for (size_t i = 0; i < s.stats.size(); ++i) std::printf("stat %zu %.12f\n", i, s.stats[i]);
    std::printf("studio: %zu images, %zu boxes, %zu detections: reading %.3f s, evaluation %.3f s\n", images.size(),
                truth.size(), detections.size(), load, evaluate);
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "bench_coco_eval: " << e.what() << "\n";
    return 1;
  }
}
