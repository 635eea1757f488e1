// NVIDIA GPUs through NVML (dlopen'd, so the backend loads on hosts without a
// driver), falling back to nvidia-smi. Devices are identified and pinned by
// GPU UUID: NVML and nvidia-smi number GPUs in PCI order, the CUDA runtime by
// default fastest-first, so an index would pin the wrong GPU on mixed hosts.
//
// Environment (see docs/backends.md):
//   ZL_CUDA_NO_NVML=1    skip NVML, ask nvidia-smi only (tests, broken NVML)
//   ZL_CUDA_NVML_LIB     NVML library to load instead of libnvidia-ml.so.1
//   ZL_CUDA_SMI          nvidia-smi to run instead of the one on PATH
//   ZL_CUDA_DRIVER_LIB   CUDA driver library to load instead of libcuda.so.1
//                        (the L2 size, which neither NVML nor nvidia-smi say)
#include <optional>
#include <string>
#include <vector>

#include "cuda_driver.hpp"
#include "cuda_nvml.hpp"
#include "cuda_parse.hpp"
#include "cuda_peaks.hpp"
#include "zl_kit/enumeration.hpp"
#include "zl_kit/text.hpp"
#include "zl_kit/tool.hpp"

namespace {

bool nvml_skipped() { return zl_kit::env_flag("ZL_CUDA_NO_NVML"); }
std::string nvml_path() { return zl_kit::env_or("ZL_CUDA_NVML_LIB", "libnvidia-ml.so.1"); }
std::string smi_path() { return zl_kit::env_or("ZL_CUDA_SMI", "nvidia-smi"); }
std::string driver_path() { return zl_kit::env_or("ZL_CUDA_DRIVER_LIB", "libcuda.so.1"); }

zl_kit::ToolResult smi_query(const char* fields) {
  return zl_kit::run_tool({smi_path(), std::string("--query-gpu=") + fields, "--format=csv,noheader,nounits"});
}

// nvidia-smi gives what NVML would, less the figures derived from the
// bus width and core count it does not print.
void add_smi_attributes(std::vector<zl_kit::Device>& devices) {
  zl_kit::ToolResult r = smi_query(zl_cuda::kSmiAttributeFields);
  zl_cuda::ValuesByUuid values;
  std::string error;
  if (!zl_kit::ran_ok(r) || !zl_cuda::parse_smi_attributes(r.out, values, error)) return;  // extras only
  for (zl_kit::Device& d : devices) {
    d.attributes = values[d.id];
    for (const zl_kit::Value& v : d.attributes) {
      if (v.name != "compute_capability") continue;
      auto parts = zl_kit::split(v.text, '.');
      auto major = parts.size() == 2 ? zl_kit::parse_int(parts[0]) : std::nullopt;
      auto minor = parts.size() == 2 ? zl_kit::parse_int(parts[1]) : std::nullopt;
      const std::string arch = major && minor ? zl_cuda::architecture_of(int(*major), int(*minor)) : "";
      if (!arch.empty()) {
        d.attributes.push_back(zl_kit::Value::str("architecture", arch));
        break;
      }
    }
  }
}

zl_kit::Enumeration enumerate() {
  zl_kit::Enumeration e;
  std::string tried;
  if (nvml_skipped()) {
    tried = "NVML skipped (ZL_CUDA_NO_NVML=" + zl_kit::env_or("ZL_CUDA_NO_NVML", "") + ")";
  } else {
    e.devices = zl_cuda::nvml_devices(nvml_path(), tried);
    if (!e.devices.empty()) {
      e.source = "library";
      zl_cuda::add_driver_attributes(e.devices, driver_path());
      return e;
    }
  }

  const std::string smi = smi_path();
  zl_kit::ToolResult r = smi_query(zl_cuda::kSmiQueryFields);
  if (!zl_kit::ran_ok(r)) {
    // Exit 6 ("No devices were found") lands here too: no GPUs, not a fault.
    e.reason = tried + "; " + zl_kit::describe_failure(smi, r);
    return e;
  }
  zl_kit::ParseResult p = zl_cuda::parse_nvidia_smi_csv(r.out);
  if (!p.ok()) {
    e.reason = smi + " output not understood: " + p.error;
    e.parse_failed = true;
    return e;
  }
  e.source = "tool";
  e.devices = std::move(p.devices);
  if (e.devices.empty()) {
    e.reason = tried + "; " + smi + " listed no GPUs";
  } else {
    add_smi_attributes(e.devices);
    zl_cuda::add_driver_attributes(e.devices, driver_path());
  }
  return e;
}

zl_kit::State state(int32_t index, const std::string& uuid) {
  if (!nvml_skipped()) {
    zl_kit::State s = zl_cuda::nvml_state(nvml_path(), index, uuid);
    if (s.error.empty() || s.code == ZL_ERROR_INVALID_ARGUMENT) return s;
  }
  zl_kit::ToolResult r = smi_query(zl_cuda::kSmiStateFields);
  if (!zl_kit::ran_ok(r)) return zl_kit::State::fail(ZL_ERROR_UNAVAILABLE, zl_kit::describe_failure(smi_path(), r));
  zl_cuda::ValuesByUuid values;
  std::string error;
  if (!zl_cuda::parse_smi_state(r.out, values, error)) {
    return zl_kit::State::fail(ZL_ERROR_PARSE, smi_path() + " state output not understood: " + error);
  }
  auto it = values.find(uuid);
  if (it == values.end()) return zl_kit::State::fail(ZL_ERROR_INVALID_ARGUMENT, "no GPU with UUID " + uuid + " now");
  zl_kit::State s;
  s.values = it->second;
  return s;
}

// NVML opens once per process here, not on every enumerate. A host without
// the library still works through nvidia-smi, so its absence is no error.
std::string initialize() {
  if (!nvml_skipped()) zl_cuda::nvml_open(nvml_path());
  return {};
}

void shutdown() { zl_cuda::nvml_close_all(); }

const char* const kAliases[] = {"nvidia", "gpu", nullptr};
const char* const kVisibility[] = {"CUDA_VISIBLE_DEVICES", nullptr};
const zl_capability kCapabilities[] = {
    {"graph_capture", "torch.cuda.CUDAGraph"},
    {"cluster_fix", "1"},
    {"device_events", "1"},
    {"torch_profiler", "cuda"},
};

const zl_kit::BackendSpec kSpec = {
    "cuda",     kAliases, kVisibility,        kCapabilities, zl_kit::count_of(kCapabilities),
    "cuda",     "nvidia", ZL_BACKEND_VERSION, enumerate,     state,
    initialize, shutdown,
};

}  // namespace

ZL_KIT_BACKEND_ENTRY(kSpec)
