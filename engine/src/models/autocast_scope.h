#pragma once
// RAII for autocast in C++, mirroring Python's `with torch.autocast(...)`:
// sets the thread-local enabled flag and dtype, counts nesting, and clears
// the global weight-cast cache when the outermost scope ends (otherwise the
// cache grows and hands out stale casts of weights the optimizer updated).
// Thread: the thread that runs the forward pass.

#include <ATen/autocast_mode.h>

namespace studio {

class AutocastScope {
 public:
  AutocastScope(at::DeviceType device, bool enabled, at::ScalarType dtype) : m_device(device), m_active(enabled) {
    if (!m_active) return;
    m_prevEnabled = at::autocast::is_autocast_enabled(device);
    m_prevDtype = at::autocast::get_autocast_dtype(device);
    at::autocast::set_autocast_enabled(device, true);
    at::autocast::set_autocast_dtype(device, dtype);
    at::autocast::increment_nesting();
  }
  ~AutocastScope() {
    if (!m_active) return;
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    at::autocast::set_autocast_enabled(m_device, m_prevEnabled);
    at::autocast::set_autocast_dtype(m_device, m_prevDtype);
  }
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  at::DeviceType m_device;
  bool m_active;
  bool m_prevEnabled = false;
  at::ScalarType m_prevDtype = at::kFloat;
};

}  // namespace studio
