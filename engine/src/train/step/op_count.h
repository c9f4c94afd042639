#pragma once
// The ATen operators dispatched while an OpCount lives, by name, on every
// thread: each counted where its thread is not already inside an operator
// (an operator's own calls are its business, as the CPU's foreach operators
// call one per tensor where CUDA launches one kernel for the list). The
// autograd engine's scope around a node's backward is not an operator: the
// operators it calls count. A measuring tool for the benchmarks and tests
// (each is a kernel launch or more on a GPU); one OpCount at a time.
// Thread: any.

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include <ATen/record_function.h>

namespace studio {

class OpCount {
 public:
  OpCount() {
    std::lock_guard<std::mutex> lock(state().mutex);
    state().byName.clear();
    m_handle = at::addGlobalCallback(at::RecordFunctionCallback(&enter, &leave).scopes({at::RecordScope::FUNCTION}));
  }
  ~OpCount() { at::removeCallback(m_handle); }
  OpCount(const OpCount&) = delete;
  OpCount& operator=(const OpCount&) = delete;

  std::map<std::string, long> byName() const {
    std::lock_guard<std::mutex> lock(state().mutex);
    return state().byName;
  }

 private:
  struct State {
    std::mutex mutex;
    std::map<std::string, long> byName;
  };
  static State& state() {
    static State s;
    return s;
  }
  static int& depth() {
    thread_local int d = 0;
    return d;
  }
  static bool scope(const at::RecordFunction& f) {
    return std::string_view(f.name()).rfind("autograd::engine::", 0) == 0;
  }
  static std::unique_ptr<at::ObserverContext> enter(const at::RecordFunction& f) {
    if (scope(f)) return nullptr;
    if (depth()++ == 0) {
      std::lock_guard<std::mutex> lock(state().mutex);
      ++state().byName[f.name()];
    }
    return nullptr;
  }
  static void leave(const at::RecordFunction& f, at::ObserverContext*) {
    if (!scope(f)) --depth();
  }

  at::CallbackHandle m_handle = 0;
};

}  // namespace studio
