// The device's facts in a run (ABI 1.2): its attributes and its state at the
// start and at the end go into the identity, its peaks and a way to read its
// state go to the child (the graph timer reads clocks and throttle reasons
// per side; every row is placed against the peaks).
#pragma once

#include <map>
#include <string>

#include "identity.hpp"
#include "zlcore/backend.hpp"

namespace zl {

// device.attributes and device.state_start (or device.state_error_start).
void record_device_start(Identity& id, const Backend& backend, const Device& device);
// device.state_end (or device.state_error_end).
void record_device_end(Identity& id, const Backend& backend, const Device& device);

// ZL_DEVICE_PEAKS (the numeric peak attributes, one JSON object) and, where
// the backend answers state queries, ZL_DEVICE_STATE_ARGV (a JSON array: the
// argv of `zlcore devices --backend B --serve-state ID`, no shell, a server
// the child starts once and asks a line at a time) with ZL_DEVICE_STATE_ID
// (the device's id, which every answer repeats).
void add_device_env(std::map<std::string, std::string>& env, const Backend& backend, const Device& device);

}  // namespace zl
