#include "studio/log.h"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/dist_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <mutex>

#include "studio/file_io.h"

namespace studio::log {
namespace {

struct State {
  std::shared_ptr<spdlog::sinks::stderr_color_sink_mt> console =
      std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  // dist_sink adds and removes sinks under its own lock, safe while logging.
  std::shared_ptr<spdlog::sinks::dist_sink_mt> fanout = std::make_shared<spdlog::sinks::dist_sink_mt>();
  std::shared_ptr<spdlog::logger> logger;
  State() {
    console->set_level(spdlog::level::info);
    fanout->add_sink(console);
    logger = std::make_shared<spdlog::logger>("studio", fanout);
    logger->set_level(spdlog::level::debug);
    logger->set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%l] %v");
    logger->flush_on(spdlog::level::warn);
  }
};

// A log file opened without following links (a log.txt planted as a link to
// a file elsewhere is refused, never appended to).
class AppendFileSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit AppendFileSink(const std::string& path) : m_file(path) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t formatted;
    formatter_->format(msg, formatted);
    m_file.append(std::string_view(formatted.data(), formatted.size()));
  }
  void flush_() override {}

 private:
  AppendFile m_file;
};

State& state() {
  static State s;
  return s;
}

}  // namespace

void debug(const std::string& t) { state().logger->debug(t); }
void info(const std::string& t) { state().logger->info(t); }
void warn(const std::string& t) { state().logger->warn(t); }
void error(const std::string& t) { state().logger->error(t); }

std::shared_ptr<spdlog::logger> logger() { return state().logger; }

std::shared_ptr<void> addSink(std::shared_ptr<spdlog::sinks::sink> sink) {
  auto fanout = state().fanout;
  fanout->add_sink(sink);
  return std::shared_ptr<void>(sink.get(), [fanout, sink](void*) {
    sink->flush();
    fanout->remove_sink(sink);
  });
}

std::shared_ptr<void> addFileSink(const std::string& path) {
  auto sink = std::make_shared<AppendFileSink>(path);
  sink->set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%l] %v");
  return addSink(sink);
}

void setConsoleLevel(const std::string& level) { state().console->set_level(spdlog::level::from_str(level)); }

}  // namespace studio::log
