#pragma once
// TensorBoard event files for a run (RUN/tensorboard/events.out.tfevents.*),
// so that `tensorboard --logdir runs` shows the studio's runs beside a
// person's Python runs: a scalar for every metric the run records (tagged by
// chart: loss/train_loss, accuracy/eval_accuracy, learning_rate/lr, ...), the
// settings as text, the hparams plugin's session records (the settings as
// hyperparameters, the run's end and status) and the final figures
// (final/test_accuracy, ...). Events are protocol buffers with TensorBoard's
// own message definitions (engine/proto, compiled with Debian's protobuf),
// framed as TFRecords: length, masked CRC-32C of the length, data, masked
// CRC-32C of the data (crcutil computes the CRC). A resumed or rolled-back
// run writes a new file that starts with a SessionLog START at the step it
// goes on from: TensorBoard then drops the older points after it.
// Thread: the engine thread (one writer per run recorder).

#include <cstdint>
#include <memory>
#include <string>

#include "studio/file_io.h"
#include "studio/metric_record.h"
#include "studio/session.h"
#include "studio/train_config.h"

namespace studio {

// CRC-32C (Castagnoli) of data, and the masked form TFRecords store.
uint32_t crc32c(const void* data, size_t bytes);
uint32_t maskedCrc32c(const void* data, size_t bytes);
// One record in TFRecord framing.
std::string tfRecord(const std::string& data);

class TensorBoardWriter {
 public:
  // A new event file in dir (made when missing, never through a link);
  // goesOnAfter >= 0: the run goes on after that step (resume, rollback).
  TensorBoardWriter(const std::string& dir, int64_t goesOnAfter);
  ~TensorBoardWriter();
  TensorBoardWriter(const TensorBoardWriter&) = delete;
  TensorBoardWriter& operator=(const TensorBoardWriter&) = delete;

  // The settings as text and as the hparams session's start (once a writer).
  void settings(const TrainConfig& config);
  void record(const MetricRecord& r);
  // The run went back to `step` (a rollback): later points are dropped.
  void goesOnAfter(int64_t step);
  // The final figures and the hparams session's end.
  void finish(const RunSummary& summary);
  void flush();
  const std::string& path() const { return m_path; }

 private:
  void add(const std::string& event);
  std::string m_path;
  AppendFile m_file;
  std::string m_buffer;
  bool m_settingsWritten = false;
};

}  // namespace studio
