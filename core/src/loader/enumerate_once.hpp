// One call of a backend's enumerate_devices on the calling thread, without a
// time limit: the probe child makes it once, Backend::enumerate makes it on a
// thread of its own so that the caller can stop waiting.
#pragma once

#include <zl/backend.h>

#include <functional>

#include "zlcore/backend.hpp"

namespace zl::loader {

// Calls enumerate_devices, reads the list (strided by the backend's
// struct_size) into a DeviceQuery and releases list and error through the
// backend. `before` (may be empty) is told each stage (open_backend.hpp)
// just before it runs.
DeviceQuery enumerate_once(const zl_backend_api* api, const std::function<void(const char*)>& before = {});

// One query_device_state call on the calling thread (ABI 1.2), released
// through the backend.
DeviceState query_state_once(const zl_backend_api* api, int32_t index, const std::string& id);

}  // namespace zl::loader
