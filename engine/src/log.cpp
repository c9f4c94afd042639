#include "studio/log.h"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/dist_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

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
  auto sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(path, false);
  sink->set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%l] %v");
  return addSink(sink);
}

void setConsoleLevel(const std::string& level) {
  state().console->set_level(spdlog::level::from_str(level));
}

}  // namespace studio::log
