#include <cstdio>
#include <filesystem>

#include "cli_commands.h"
#include "studio/run_queue.h"

namespace studio::cli {
namespace {

void printQueue(const std::vector<QueueItem>& items, const std::string& file) {
  if (items.empty()) {
    std::printf("queue %s is empty\n", file.c_str());
    return;
  }
  std::printf("%4s  %-8s %-40s %s\n", "id", "status", "run", "folder");
  for (const auto& i : items) {
    const std::string what = i.label.empty() ? i.config.name : i.label;
    std::printf("%4lld  %-8s %-40s %s\n", static_cast<long long>(i.id), i.status.name().c_str(), what.c_str(),
                i.runDir.empty() ? "-" : i.runDir.c_str());
    if (!i.error.empty()) std::printf("      error: %s\n", i.error.c_str());
  }
}

// Runs the queue's items one after another: first one a crash or Ctrl-C
// left running (resumed from its checkpoint), then the queued ones in order.
int runQueue(const std::string& file, const RunSession& runSession) {
  QueuePass pass(file);
  while (const std::optional<QueueItem> next = pass.next()) {
    const QueueItem& item = *next;
    const std::string what = item.label.empty() ? item.config.name : item.label;
    Session session;
    try {
      if (queueItemResumes(item)) {
        std::fprintf(stderr, "queue item %lld (%s): resuming %s\n", static_cast<long long>(item.id), what.c_str(),
                     item.runDir.c_str());
        session.resume(item.runDir);
      } else {
        if (!item.runDir.empty())
          std::fprintf(stderr, "queue item %lld: %s has no checkpoint to resume from; starting it again\n",
                       static_cast<long long>(item.id), item.runDir.c_str());
        session.start(item.config);
        std::fprintf(stderr, "queue item %lld (%s): started %s\n", static_cast<long long>(item.id), what.c_str(),
                     session.progress().runDir.c_str());
      }
    } catch (const std::exception& e) {
      pass.notStarted(item, e.what());
      std::fprintf(stderr, "queue item %lld failed to start: %s\n", static_cast<long long>(item.id), e.what());
      continue;
    }
    pass.started(item, session.progress().runDir);
    runSession(session);
    const RunSummary s = session.summary();
    if (!pass.ended(item, s.status, s.error)) {
      std::fprintf(stderr, "queue stopped; `training-studio-cli queue run --queue %s` resumes item %lld\n",
                   file.c_str(), static_cast<long long>(item.id));
      return 130;
    }
  }
  std::printf("\nqueue %s: %d run(s) this time, %d failed\n", file.c_str(), pass.ran(), pass.failed());
  printQueue(loadQueue(file), file);
  return pass.failed() > 0 ? 1 : 0;
}

}  // namespace

QueueCommand::QueueCommand(CLI::App& app) {
  m_queue = app.add_subcommand("queue", "A queue of runs in a file, run one after another");
  m_queue->require_subcommand(1);
  m_add = m_queue->add_subcommand("add", "Add runs: the settings, or a grid of values of some settings");
  m_settings.addTo(m_add);
  m_add->add_option("--grid", m_grids, "A setting's values to try: key=v1,v2,... (repeatable: every combination)");
  m_list = m_queue->add_subcommand("list", "Show the queue");
  auto* run = m_queue->add_subcommand("run", "Run the queued runs one after another");
  for (auto* q : {m_add, m_list, run})
    q->add_option("--queue", m_file, "The queue file (default runs/queue.json)")->check(kNamesSomething);
}

int QueueCommand::run(const RunSession& runSession) {
  if (m_file.empty()) throw ConfigFileError("--queue names no file (got \"\")");
  if (std::filesystem::is_directory(m_file))
    throw ConfigFileError("--queue " + m_file + " is a folder; give the queue's JSON file");
  const auto parent = std::filesystem::path(m_file).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  if (m_add->parsed()) {
    const auto added = expandGrid(m_settings.load(), m_grids);
    const auto items = addToQueue(m_file, added);
    std::printf("added %zu run(s) to %s\n", added.size(), m_file.c_str());
    printQueue(items, m_file);
    return 0;
  }
  if (m_list->parsed()) {
    printQueue(loadQueue(m_file), m_file);
    return 0;
  }
  return runQueue(m_file, runSession);
}

}  // namespace studio::cli
