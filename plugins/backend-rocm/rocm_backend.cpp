// AMD GPUs through amd-smi, falling back to rocm-smi.
//
// The amd-smi library (libamd_smi.so) is not used: its public C API hands
// back structs (amdsmi_asic_info_t, amdsmi_enumeration_info_t) whose layouts
// changed across ROCm releases, and declaring them ourselves without the
// header would risk memory corruption inside the zlcore process on a version
// we did not build against. The CLI's JSON is the stable surface, so this
// backend is tool-only.
//
// Environment (see docs/backends.md):
//   ZL_AMD_SMI    amd-smi to run instead of the one on PATH
//   ZL_ROCM_SMI   rocm-smi to run instead of the one on PATH
#include <string>
#include <vector>

#include "rocm_parse.hpp"
#include "zl_kit/enumeration.hpp"
#include "zl_kit/tool.hpp"

namespace {

zl_kit::Enumeration enumerate() {
  zl_kit::Enumeration e;
  std::vector<std::string> tried = {"libamd_smi.so not used (tool only)"};
  bool parse_failed = false;

  const std::string amd_smi = zl_kit::env_or("ZL_AMD_SMI", "amd-smi");
  zl_kit::ToolResult list = zl_kit::run_tool({amd_smi, "list", "-e", "--json"});
  if (!zl_kit::ran_ok(list)) {
    // Releases before "-e" existed exit 2 here; rocm-smi then gives the UUIDs.
    tried.push_back(zl_kit::describe_failure(amd_smi, list));
  } else {
    zl_kit::ParseResult p = zl_rocm::parse_amd_smi_list(list.out);
    if (!p.ok()) {
      tried.push_back(amd_smi + " list output not understood: " + p.error);
      parse_failed = true;
    } else if (p.devices.empty()) {
      tried.push_back(amd_smi + " listed no GPUs");
    } else {
      // Names and memory are optional extras: identity and pinning are
      // already settled by the list.
      zl_kit::ToolResult st = zl_kit::run_tool({amd_smi, "static", "--asic", "--vram", "--json"});
      if (zl_kit::ran_ok(st)) zl_rocm::merge_amd_smi_static(st.out, p.devices);
      e.devices = std::move(p.devices);
      e.source = "tool";
      return e;
    }
  }

  const std::string rocm_smi = zl_kit::env_or("ZL_ROCM_SMI", "rocm-smi");
  zl_kit::ToolResult r = zl_kit::run_tool(
      {rocm_smi, "--showproductname", "--showuse", "--showmeminfo", "vram", "--showuniqueid", "--showbus", "--json"});
  if (!zl_kit::ran_ok(r)) {
    tried.push_back(zl_kit::describe_failure(rocm_smi, r));
  } else {
    zl_kit::ParseResult p = zl_rocm::parse_rocm_smi_json(r.out);
    if (!p.ok()) {
      tried.push_back(rocm_smi + " output not understood: " + p.error);
      parse_failed = true;
    } else if (p.devices.empty()) {
      tried.push_back(rocm_smi + " listed no GPUs");
    } else {
      e.devices = std::move(p.devices);
      e.source = "tool";
      return e;
    }
  }

  for (const std::string& t : tried) e.reason += (e.reason.empty() ? "" : "; ") + t;
  e.parse_failed = parse_failed;
  return e;
}

// State from the same tool: what the enumeration reports for the device now.
zl_kit::State state(int32_t index, const std::string& id) { return zl_kit::state_from(enumerate(), index, id); }

const char* const kAliases[] = {"amd", "hip", nullptr};
// ROCR only: HIP_VISIBLE_DEVICES would filter a second time, on indices
// renumbered by the first filter.
const char* const kVisibility[] = {"ROCR_VISIBLE_DEVICES", nullptr};
const zl_capability kCapabilities[] = {
    {"device_events", "1"},
    // ROCm builds of torch report HIP kernels under the CUDA activity.
    {"torch_profiler", "cuda"},
};

const zl_kit::BackendSpec kSpec = {
    "rocm",  kAliases,           kVisibility, kCapabilities, zl_kit::count_of(kCapabilities),
    "cuda",  // ROCm builds of torch use the cuda device type
    "amd",   ZL_BACKEND_VERSION, enumerate,   state,         nullptr,
    nullptr,
};

}  // namespace

ZL_KIT_BACKEND_ENTRY(kSpec)
