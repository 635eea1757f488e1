// Pure parsers for what the ROCm backend reads: amd-smi's and rocm-smi's JSON.
// No I/O here, so tests feed recorded outputs straight in.
//
// Visibility: the backend pins a device with ROCR_VISIBLE_DEVICES only (HIP's
// variable filters again on top of ROCR's, so setting both double-filters).
// ROCR accepts an index or a UUID of the form "GPU-<hex>", the form rocminfo
// prints and amd-smi reports as hip_uuid. We prefer that UUID: ROCR's index
// order need not match amd-smi's or rocm-smi's card numbering, and a UUID
// pins the same GPU whatever else is visible. Where no UUID exists (consumer
// parts report "N/A"), we fall back to ROCR's index: hip_id from amd-smi,
// else rocm-smi's card number, which matches ROCR on hosts without iGPU.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "zl_kit/enumeration.hpp"

namespace zl_rocm {

// `amd-smi list -e --json`: an array of {gpu, bdf, uuid, ..., hip_id,
// hip_uuid} (newer releases wrap it as {"gpu_data": [...]}). Names and memory
// are not in it; merge_amd_smi_static adds them.
zl_kit::ParseResult parse_amd_smi_list(std::string_view text);

// `amd-smi static --asic --vram --json`: fills name and total memory into
// devices with the same "gpu" number. Returns "" or why the text was not
// understood (the devices are then left as they were).
std::string merge_amd_smi_static(std::string_view text, std::vector<zl_kit::Device>& devices);

// `rocm-smi --showproductname --showuse --showmeminfo vram --showuniqueid
// --showbus --json`: {"card0": {...}, ...}. Keys are matched without regard to
// case (ROCm 6.1 printed "Card series", 6.2 "Card Series"); warnings printed
// before the JSON are skipped.
zl_kit::ParseResult parse_rocm_smi_json(std::string_view text);

// "GPU-<hex>" for a rocm-smi unique id ("0x5c88007d760374f3"), or "" when the
// id is missing, "N/A" or not hex.
std::string rocr_uuid_from_unique_id(const std::string& unique_id);

}  // namespace zl_rocm
