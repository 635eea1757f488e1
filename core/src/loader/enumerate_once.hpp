// One call of a backend's enumerate_devices on the calling thread, without a
// time limit: the probe child makes it once, Backend::enumerate makes it on a
// thread of its own so that the caller can stop waiting.
#pragma once

#include <zl/backend.h>

#include <functional>
#include <string>

#include "zlcore/backend.hpp"

namespace zl::loader {

// Calls enumerate_devices, reads the list (device_read.hpp) into a
// DeviceQuery and releases list and error through the backend. `pin_var` is
// the backend's first visibility variable ("" for none). `before` (may be
// empty) is told each stage (open_backend.hpp) just before it runs.
// `unreadable`, when given, is set to the first memory of the list that
// could not be read ("" for none).
DeviceQuery enumerate_once(const zl_backend_api* api, const std::string& pin_var,
                           const std::function<void(const char*)>& before = {}, std::string* unreadable = nullptr);

// A backend's error as one line of printable text, read through safe reads
// ("error code 3" when it has no message). The caller still destroys it.
std::string error_text(const zl_error* err);

// One query_device_state call on the calling thread (ABI 1.2), released
// through the backend.
// `unreadable`, when given, is set to what of the state could not be read
// ("" for all of it).
DeviceState query_state_once(const zl_backend_api* api, int32_t index, const std::string& id,
                             std::string* unreadable = nullptr);

}  // namespace zl::loader
