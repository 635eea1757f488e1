// NVML, dlopen'd (the backend loads on hosts without a driver) and
// initialized once per process by the backend's initialize, not on every
// enumerate: nvmlInit/nvmlShutdown cost tens of milliseconds and a batch
// enumerates before every dispatch round.
#pragma once

#include <string>
#include <vector>

#include "zl_kit/enumeration.hpp"

namespace zl_cuda {

// Opens and initializes the NVML at `path` once (later calls reuse it; a
// failure is retried on the next call). Returns "" when ready, else why not.
std::string nvml_open(const std::string& path);

// Devices with their attributes, or none and `reason`.
std::vector<zl_kit::Device> nvml_devices(const std::string& path, std::string& reason);

// The state of the device at `index` whose UUID is `uuid`.
zl_kit::State nvml_state(const std::string& path, int32_t index, const std::string& uuid);

// nvmlShutdown for every library nvml_open initialized.
void nvml_close_all();

}  // namespace zl_cuda
