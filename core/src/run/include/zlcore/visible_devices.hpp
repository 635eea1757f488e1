// The devices a backend offers this process. A visibility variable the backend
// names (its visibility_env) that is already set in zlcore's own environment,
// by the user, a job script or a scheduler, is a promise about which devices
// this process may use; zlcore keeps it: `run` and `batch` pick only among
// the devices it names and never pin one outside them. The variable names and
// the values come from the backend, so the core stays vendor-neutral.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "zlcore/backend.hpp"

namespace zl {

struct VisibleDevices {
  DeviceQuery query;                        // the backend's answer, only the devices the pin names
  std::vector<Device> hidden;               // the devices the pin leaves out
  std::map<std::string, std::string> pins;  // visibility variable -> its value, for those already set
  // "<VARIABLE>=3" (several joined by ", "); empty when nothing was set.
  std::string describe() const;
};

// Asks the backend once and applies the pin. A token of a set variable names
// a device by its visibility value, its stable id or its index (what the
// Slurm shards accept from Slurm's GRES, batch/slurm_launcher.cpp); several
// set variables must all name a device for it to stay. Throws UsageError
// naming the variable when a token names no device the backend reports. An
// empty value counts as unset, like every variable zlcore reads.
VisibleDevices visible_devices(const Backend& backend);

}  // namespace zl
