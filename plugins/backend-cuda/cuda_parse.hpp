// Pure parsers for what the CUDA backend reads: nvidia-smi's CSV query.
// No I/O here, so tests feed recorded outputs straight in.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "zl_kit/enumeration.hpp"

namespace zl_cuda {

// The --query-gpu fields the parser expects, in this order.
inline constexpr const char* kSmiQueryFields = "index,uuid,name,memory.total,memory.used,utilization.gpu";

// Parses `nvidia-smi --query-gpu=<kSmiQueryFields> --format=csv,noheader,nounits`.
// Memory is MiB; "[N/A]", "N/A" and other bracketed values mean unknown.
// visibility_value is the GPU UUID: the CUDA runtime accepts it in
// CUDA_VISIBLE_DEVICES, while its index order differs from nvidia-smi's.
zl_kit::ParseResult parse_nvidia_smi_csv(std::string_view text);

// Builds one device from NVML's answers (the library path), so that both
// sources describe a device the same way. used_bytes < 0 / util < 0: unknown.
zl_kit::Device device_from_nvml(int32_t index, const std::string& name, const std::string& uuid, uint64_t total_bytes,
                                int64_t used_bytes, int32_t util_percent);

// Attributes and state through nvidia-smi, where NVML is not used: one
// --query-gpu each, keyed by the GPU UUID in the first column.
inline constexpr const char* kSmiAttributeFields =
    "uuid,driver_version,compute_cap,clocks.max.sm,clocks.max.memory,enforced.power.limit,ecc.mode.current,pci.bus_id";
inline constexpr const char* kSmiStateFields =
    "uuid,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active,utilization.gpu,memory.used";

using ValuesByUuid = std::map<std::string, std::vector<zl_kit::Value>>;
// Unknown values ("[N/A]") are left out; a line with the wrong number of
// fields, or a number that is not one, fails the whole text.
bool parse_smi_attributes(std::string_view text, ValuesByUuid& out, std::string& error);
bool parse_smi_state(std::string_view text, ValuesByUuid& out, std::string& error);

}  // namespace zl_cuda
