// Reads the device list a backend returned into a DeviceQuery, through
// safe_read.hpp: a count larger than the array, an entry whose struct_size
// is too small, a string pointing nowhere or an id that is not printable
// text each give a rejected device or an error with the reason, never a
// crash and never a device that silently disappears.
#pragma once

#include <zl/backend.h>

#include <string>

#include "zlcore/backend.hpp"

namespace zl::loader {

// `pin_var` is the backend's first visibility variable ("" for none): a
// device needs a visibility_value when there is one. Fills q.devices,
// q.rejected, q.reason, q.source; q.error for a list that cannot be read.
// Returns the first memory the list pointed to that could not be read ("" for
// none): the probe rejects a backend that hands out such a list.
std::string read_device_list(const zl_device_list* list, uint32_t abi_minor, const std::string& pin_var,
                             DeviceQuery& q);

}  // namespace zl::loader
