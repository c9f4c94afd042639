#include "run/tensorboard_writer.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>

#include <generic_crc.h>
#include <nlohmann/json.hpp>

#include "proto/tensorboard_event.pb.h"
#include "proto/tensorboard_hparams.pb.h"
#include "studio/errors.h"
#include "studio/metric_catalog.h"

namespace studio {
namespace {

using Crc32cTable = crcutil::GenericCrc<crcutil::uint64, crcutil::uint64, crcutil::uint64, 4>;

double now() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

const char* group(MetricPlot chart) {
  switch (chart) {
    case MetricPlot::Loss:
      return "loss";
    case MetricPlot::Accuracy:
      return "accuracy";
    case MetricPlot::LearningRate:
      return "learning_rate";
    case MetricPlot::Throughput:
      return "throughput";
    case MetricPlot::Memory:
      return "memory";
    case MetricPlot::GradNorm:
      return "gradients";
    case MetricPlot::LossScale:
      return "loss_scale";
    case MetricPlot::None:
      return "other";
  }
  return "other";
}

tensorboard::Event event(int64_t step) {
  tensorboard::Event e;
  e.set_wall_time(now());
  e.set_step(step);
  return e;
}

void addScalar(tensorboard::Summary* summary, const std::string& tag, double value) {
  auto* v = summary->add_value();
  v->set_tag(tag);
  v->set_simple_value(static_cast<float>(value));
}

// A text summary (the text plugin renders it as Markdown).
void addText(tensorboard::Summary* summary, const std::string& tag, const std::string& text) {
  auto* v = summary->add_value();
  v->set_tag(tag);
  v->mutable_metadata()->mutable_plugin_data()->set_plugin_name("text");
  v->mutable_metadata()->set_data_class(tensorboard::DATA_CLASS_TENSOR);
  auto* t = v->mutable_tensor();
  t->set_dtype(tensorboard::DT_STRING);
  t->mutable_tensor_shape();
  t->add_string_val(text);
}

// The hparams plugin reads its data from the summary's metadata; the value is
// a null float, as TensorBoard's own hparams summaries write it.
void addHparams(tensorboard::Summary* summary, const std::string& tag,
                const tensorboard::hparams::HParamsPluginData& d) {
  auto* v = summary->add_value();
  v->set_tag(tag);
  auto* plugin = v->mutable_metadata()->mutable_plugin_data();
  plugin->set_plugin_name("hparams");
  plugin->set_content(d.SerializeAsString());
  auto* t = v->mutable_tensor();
  t->set_dtype(tensorboard::DT_FLOAT);
  t->mutable_tensor_shape();
  t->add_float_val(0.0f);
}

void flatten(const nlohmann::json& j, const std::string& prefix,
             google::protobuf::Map<std::string, google::protobuf::Value>& out) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string key = prefix.empty() ? it.key() : prefix + "." + it.key();
    if (key == "output" || key == "schema_version") continue;  // where it was written, not how it trained
    const nlohmann::json& v = it.value();
    if (v.is_object())
      flatten(v, key, out);
    else if (v.is_boolean())
      out[key].set_bool_value(v.get<bool>());
    else if (v.is_number())
      out[key].set_number_value(v.get<double>());
    else if (v.is_string())
      out[key].set_string_value(v.get<std::string>());
  }
}

std::string eventText(const MetricRecord& r) {
  char line[200];
  switch (r.kind) {
    case RecordKind::LrChange:
      std::snprintf(line, sizeof line, "learning rate set to %g", r.lr);
      break;
    case RecordKind::NonFinite:
      std::snprintf(line, sizeof line, "loss or gradients not finite (loss %g)", r.trainLoss);
      break;
    case RecordKind::Rollback:
      std::snprintf(line, sizeof line, "rolled back here; learning rate %g", r.lr);
      break;
    case RecordKind::EarlyStop:
      std::snprintf(line, sizeof line, "early stop");
      break;
    case RecordKind::OomBackoff:
      std::snprintf(line, sizeof line, "out of memory: micro-batch now %lld", static_cast<long long>(r.microBatch));
      break;
    case RecordKind::Unfreeze:
      std::snprintf(line, sizeof line, "layers unfrozen (train.finetune); head lr %g", r.lr);
      break;
    default:
      return "";
  }
  return line;
}

}  // namespace

uint32_t crc32c(const void* data, size_t bytes) {
  static const Crc32cTable table(0x82f63b78, 32, true);  // the reflected Castagnoli polynomial
  return static_cast<uint32_t>(table.CrcDefault(data, bytes, 0));
}

uint32_t maskedCrc32c(const void* data, size_t bytes) {
  const uint32_t crc = crc32c(data, bytes);
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

std::string tfRecord(const std::string& data) {
  std::string out;
  const uint64_t length = data.size();
  char header[8];
  for (int i = 0; i < 8; ++i) header[i] = static_cast<char>((length >> (8 * i)) & 0xff);
  auto put32 = [&out](uint32_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  };
  out.append(header, 8);
  put32(maskedCrc32c(header, 8));
  out += data;
  put32(maskedCrc32c(data.data(), data.size()));
  return out;
}

TensorBoardWriter::TensorBoardWriter(const std::string& dir, int64_t goesOnAfterStep) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw IoError("cannot create " + dir + ": " + ec.message());
  requireRealDirectory(dir);
  char host[256] = "localhost";
  gethostname(host, sizeof host - 1);
  static int serial = 0;
  const auto seconds = static_cast<long long>(now());
  for (;; ++serial) {
    m_path = dir + "/events.out.tfevents." + std::to_string(seconds) + "." + host + "." + std::to_string(getpid()) +
             "." + std::to_string(serial);
    if (!std::filesystem::exists(std::filesystem::symlink_status(m_path))) break;
  }
  ++serial;
  m_file = AppendFile(m_path);
  tensorboard::Event first = event(0);
  first.set_file_version("brain.Event:2");
  add(first.SerializeAsString());
  if (goesOnAfterStep >= 0) goesOnAfter(goesOnAfterStep);
  flush();
}

TensorBoardWriter::~TensorBoardWriter() {
  try {
    flush();
  } catch (...) {
    // The recorder's own flush reports a failing disk.
  }
}

void TensorBoardWriter::add(const std::string& e) { m_buffer += tfRecord(e); }

void TensorBoardWriter::goesOnAfter(int64_t step) {
  tensorboard::Event e = event(step + 1);
  e.mutable_session_log()->set_status(tensorboard::SessionLog::START);
  add(e.SerializeAsString());
}

void TensorBoardWriter::settings(const TrainConfig& config) {
  if (m_settingsWritten) return;
  m_settingsWritten = true;
  const nlohmann::json j = toJson(config);
  tensorboard::Event e = event(0);
  // Indented: Markdown shows it as code. Built in one pass (inserting at
  // each line was quadratic: a million data.ignore_columns took minutes).
  const std::string dumped = j.dump(2);
  std::string text = "    ";
  text.reserve(dumped.size() * 2);
  for (const char ch : dumped) {
    text += ch;
    if (ch == '\n') text += "    ";
  }
  addText(e.mutable_summary(), "settings", text);
  tensorboard::hparams::HParamsPluginData start;
  start.set_version(0);
  auto* info = start.mutable_session_start_info();
  flatten(j, "", *info->mutable_hparams());
  info->set_start_time_secs(now());
  addHparams(e.mutable_summary(), "_hparams_/session_start_info", start);
  add(e.SerializeAsString());
}

void TensorBoardWriter::record(const MetricRecord& r) {
  tensorboard::Event e = event(r.step);
  if (r.kind == RecordKind::Train || r.kind == RecordKind::Eval) {
    for (const MetricSpec& m : metricCatalog()) {
      if (m.kind != r.kind) continue;
      const double v = m.value(r);
      if (std::isfinite(v)) addScalar(e.mutable_summary(), std::string(group(m.chart)) + "/" + m.id, v);
    }
  } else {
    addText(e.mutable_summary(), "events", eventText(r));
  }
  if (e.summary().value_size() > 0) add(e.SerializeAsString());
}

void TensorBoardWriter::finish(const RunSummary& s) {
  tensorboard::Event e = event(s.steps);
  // summary.json's figures, by its keys.
  for (const auto& [id, value] : s.test.figures.values())
    if (std::isfinite(value)) addScalar(e.mutable_summary(), "final/" + testKey(id), value);
  for (const auto& [id, value] : s.bestEval.values())
    if (std::isfinite(value)) addScalar(e.mutable_summary(), "final/" + bestKey(id), value);
  if (std::isfinite(s.samplesPerSecond)) addScalar(e.mutable_summary(), "final/samples_per_second", s.samplesPerSecond);
  // A stopped run may go on (resume): its session ends when the run does.
  // TensorBoard keeps the first record of a tag, so it is written once.
  if (s.status == RunStatus::stopped) {
    add(e.SerializeAsString());
    flush();
    return;
  }
  tensorboard::hparams::HParamsPluginData end;
  end.set_version(0);
  auto* info = end.mutable_session_end_info();
  info->set_status(finishedStatus(s.status) ? tensorboard::hparams::STATUS_SUCCESS
                                            : tensorboard::hparams::STATUS_FAILURE);
  info->set_end_time_secs(now());
  addHparams(e.mutable_summary(), "_hparams_/session_end_info", end);
  add(e.SerializeAsString());
  flush();
}

void TensorBoardWriter::flush() {
  if (m_buffer.empty()) return;
  m_file.append(m_buffer);
  m_buffer.clear();
}

}  // namespace studio
