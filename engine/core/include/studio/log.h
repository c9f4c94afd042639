#pragma once
// The engine's log, a thin facade over spdlog. Engine files that include torch
// cannot include spdlog (torch's wheel ships its own, newer fmt headers that
// would shadow Debian's), so they log through these plain functions.
// Thread: all functions are thread-safe.

#include <memory>
#include <string>

namespace spdlog {
class logger;
namespace sinks {
class sink;
}
}  // namespace spdlog

namespace studio::log {

void debug(const std::string& text);
void info(const std::string& text);
void warn(const std::string& text);
void error(const std::string& text);

// The shared logger, for front-ends that add a sink (the window's log view).
std::shared_ptr<spdlog::logger> logger();
// Send everything to this sink too (the window's log view) until the
// returned handle is dropped. The sink keeps its own pattern.
std::shared_ptr<void> addSink(std::shared_ptr<spdlog::sinks::sink> sink);
// Mirror everything into this file until the returned handle is dropped.
// The file is opened without following links: a link there throws InputError.
std::shared_ptr<void> addFileSink(const std::string& path);
// Console output on/off (the CLI keeps the terminal for its progress bar).
void setConsoleLevel(const std::string& level);

}  // namespace studio::log
