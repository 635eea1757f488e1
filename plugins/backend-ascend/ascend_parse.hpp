// Pure parsers for what the Ascend backend reads from npu-smi.
//
// `npu-smi info -m` maps (NPU ID, Chip ID) to the Chip Logic ID that
// torch_npu and ASCEND_RT_VISIBLE_DEVICES use; its Mcu rows (management
// controllers, logic id "-") are not compute devices and are skipped.
// `npu-smi info` adds bus id, memory (HBM where the chip has it) and AICore
// usage per (NPU, chip). visibility_value is the chip logic id.
#pragma once

#include <map>
#include <string_view>
#include <utility>

#include "zl_kit/enumeration.hpp"

namespace zl_ascend {

// Devices from `npu-smi info -m`: index and visibility_value are the logic
// id, id is "npu<N>-chip<M>" until merge_npu_smi_info supplies a bus id.
zl_kit::ParseResult parse_npu_smi_map(std::string_view text);

// What `npu-smi info` says about one chip.
struct ChipStatus {
  std::string name;
  std::string bus_id;
  int64_t memory_total_mb = -1;
  int64_t memory_used_mb = -1;
  int32_t aicore_percent = -1;
  double power_w = -1;         // the NPU row's Power(W); -1: not shown
  int64_t temperature_c = -1;  // the NPU row's Temp(C)
  std::string driver_version;  // the table's "Version: 23.0.6" (the driver package npu-smi ships with)
};
using ChipKey = std::pair<int64_t, int64_t>;  // (NPU ID, Chip ID)

// Parses the `npu-smi info` table (the process table below it is ignored).
// Returns "" or why the table was not understood.
std::string parse_npu_smi_info(std::string_view text, std::map<ChipKey, ChipStatus>& out);

// Folds chip status into devices from parse_npu_smi_map. The map parser
// records each device's (NPU, chip) so the two line up.
void merge_npu_smi_info(const std::map<ChipKey, ChipStatus>& status, std::vector<zl_kit::Device>& devices,
                        const std::vector<ChipKey>& keys);

// parse_npu_smi_map plus the (NPU, chip) of each device, in device order.
zl_kit::ParseResult parse_npu_smi_map(std::string_view text, std::vector<ChipKey>& keys);

}  // namespace zl_ascend
