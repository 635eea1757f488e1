// Huawei Ascend NPUs through npu-smi: `info -m` for the chip logic ids that
// ASCEND_RT_VISIBLE_DEVICES and torch_npu use, then `info` for bus id,
// memory and AICore usage.
//
// DCMI (libdcmi.so) is not used: its header ships only with the driver, and
// guessing its structs could corrupt memory inside the zlcore process.
//
// Environment (see docs/backends.md):
//   ZL_ASCEND_NPU_SMI   npu-smi to run instead of the one on PATH
#include <string>

#include "ascend_parse.hpp"
#include "zl_kit/enumeration.hpp"
#include "zl_kit/tool.hpp"

namespace {

zl_kit::Enumeration enumerate() {
  zl_kit::Enumeration e;
  const std::string smi = zl_kit::env_or("ZL_ASCEND_NPU_SMI", "npu-smi");
  const std::string tried = "libdcmi.so not used (tool only)";

  zl_kit::ToolResult map = zl_kit::run_tool({smi, "info", "-m"});
  if (!zl_kit::ran_ok(map)) {
    e.reason = tried + "; " + zl_kit::describe_failure(smi + " info -m", map);
    return e;
  }
  std::vector<zl_ascend::ChipKey> keys;
  zl_kit::ParseResult p = zl_ascend::parse_npu_smi_map(map.out, keys);
  if (!p.ok()) {
    e.reason = smi + " info -m not understood: " + p.error;
    e.parse_failed = true;
    return e;
  }
  if (p.devices.empty()) {
    e.reason = tried + "; " + smi + " info -m listed no NPU chips";
    return e;
  }
  // Status is an extra: ids and pinning are settled by the map.
  zl_kit::ToolResult info = zl_kit::run_tool({smi, "info"});
  if (zl_kit::ran_ok(info)) {
    std::map<zl_ascend::ChipKey, zl_ascend::ChipStatus> status;
    if (zl_ascend::parse_npu_smi_info(info.out, status).empty()) zl_ascend::merge_npu_smi_info(status, p.devices, keys);
  }
  e.devices = std::move(p.devices);
  e.source = "tool";
  return e;
}

// State from the same tool: what the enumeration reports for the device now.
zl_kit::State state(int32_t index, const std::string& id) { return zl_kit::state_from(enumerate(), index, id); }

const char* const kAliases[] = {"npu", "huawei", nullptr};
const char* const kVisibility[] = {"ASCEND_RT_VISIBLE_DEVICES", nullptr};
const zl_capability kCapabilities[] = {
    {"device_events", "1"},
};

const zl_kit::BackendSpec kSpec = {
    "ascend", kAliases, kVisibility,        kCapabilities, zl_kit::count_of(kCapabilities),
    "npu",    "ascend", ZL_BACKEND_VERSION, enumerate,     state,
    nullptr,  nullptr,
};

}  // namespace

ZL_KIT_BACKEND_ENTRY(kSpec)
