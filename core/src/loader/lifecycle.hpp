// A backend's life in this process (ABI 1.2): initialize once after the
// table was accepted, shutdown once at normal exit, and only when no call
// into it is still running (an enumerate that ran past its time limit may
// still be inside the backend; shutting down under it would pull the
// library's state away).
#pragma once

#include <zl/backend.h>

#include <atomic>
#include <memory>
#include <string>

namespace zl::loader {

// Calls the backend's initialize when it has one. Returns "" or the reason
// the backend cannot be used ("initialize failed: ..."). On success the
// backend's shutdown is called at exit. `who` (backend_words(), "" in the
// probe child) names the backend when initialize or shutdown crashes or
// writes on stdout; with "" neither is watched.
std::string initialize_backend(const zl_backend_api* api, const std::string& who = "");

// Calls shutdown now (the probe child, which exits right after).
void shutdown_backend(const zl_backend_api* api);

// Calls into the backend that ran out of time and have not returned: one
// counter per table, shared by every Backend made from it.
std::shared_ptr<std::atomic<int>> overdue_calls(const zl_backend_api* api);

// An entry of minor 2 or later, read only when the table reaches it.
template <class Fn>
Fn entry(const zl_backend_api* api, Fn zl_backend_api::*member, size_t end_offset) {
  if (api->abi_minor < 2 || api->struct_size < end_offset) return nullptr;
  return api->*member;
}
#define ZL_ENTRY(api, field) \
  ::zl::loader::entry(api, &zl_backend_api::field, offsetof(zl_backend_api, field) + sizeof(zl_backend_api::field))

}  // namespace zl::loader
