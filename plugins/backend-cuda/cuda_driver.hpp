// The CUDA driver API (libcuda.so.1, dlopen'd), for what NVML and nvidia-smi
// do not say: the L2 cache's size (cuDeviceGetAttribute, attribute 38).
// Devices are matched to NVML's by UUID. The driver sees only the GPUs
// CUDA_VISIBLE_DEVICES leaves in zlcore's own environment; a GPU it hides
// simply has no L2 attribute.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "zl_kit/enumeration.hpp"

namespace zl_cuda {

// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as NVML and nvidia-smi print a
// UUID, from the driver's 16 bytes.
std::string uuid_text(const unsigned char bytes[16]);

// L2 bytes by UUID from the driver at `path`, asked once per process (the
// size never changes; cuInit costs tens of milliseconds and a batch
// enumerates before every dispatch round). Empty when the library is absent
// or fails: the attribute is then left out.
const std::map<std::string, int64_t>& driver_l2_bytes(const std::string& path);

// Appends `l2_cache_bytes` to every device whose UUID the driver knows.
void add_driver_attributes(std::vector<zl_kit::Device>& devices, const std::string& path);

}  // namespace zl_cuda
