// NVIDIA GPUs through NVML (dlopen'd, so the backend loads on hosts without a
// driver), falling back to nvidia-smi. Devices are identified and pinned by
// GPU UUID: NVML and nvidia-smi number GPUs in PCI order, the CUDA runtime by
// default fastest-first, so an index would pin the wrong GPU on mixed hosts.
//
// Environment (see docs/backends.md):
//   ZL_CUDA_NO_NVML=1    skip NVML, ask nvidia-smi only (tests, broken NVML)
//   ZL_CUDA_NVML_LIB     NVML library to load instead of libnvidia-ml.so.1
//   ZL_CUDA_SMI          nvidia-smi to run instead of the one on PATH
#include <dlfcn.h>

#include <string>
#include <vector>

#include "cuda_parse.hpp"
#include "zl_kit/enumeration.hpp"
#include "zl_kit/tool.hpp"

namespace {

// The few NVML declarations we need, written from the public API reference
// rather than taken from nvml.h, so the build needs no NVIDIA headers.
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr unsigned kNvmlStringBuffer = 96;  // NVML_DEVICE_{NAME,UUID}_V2_BUFFER_SIZE
struct nvmlMemory_t {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
struct nvmlUtilization_t {
  unsigned int gpu;
  unsigned int memory;
};

struct Nvml {
  nvmlReturn_t (*init)();
  nvmlReturn_t (*shutdown)();
  nvmlReturn_t (*count)(unsigned int*);
  nvmlReturn_t (*handle)(unsigned int, nvmlDevice_t*);
  nvmlReturn_t (*name)(nvmlDevice_t, char*, unsigned int);
  nvmlReturn_t (*uuid)(nvmlDevice_t, char*, unsigned int);
  nvmlReturn_t (*memory)(nvmlDevice_t, nvmlMemory_t*);
  nvmlReturn_t (*utilization)(nvmlDevice_t, nvmlUtilization_t*);
  const char* (*error_string)(nvmlReturn_t);  // optional
};

template <class Fn>
bool bind(void* lib, const char* symbol, Fn& fn, std::string& missing) {
  fn = reinterpret_cast<Fn>(dlsym(lib, symbol));
  if (fn == nullptr) missing = symbol;
  return fn != nullptr;
}

std::string nvml_error(const Nvml& nvml, const char* call, nvmlReturn_t rc) {
  std::string text = std::string(call) + " returned " + std::to_string(rc);
  if (nvml.error_string != nullptr) {
    const char* s = nvml.error_string(rc);
    if (s != nullptr) text += " (" + std::string(s) + ")";
  }
  return text;
}

// Devices from NVML, or an empty list and a reason. The library stays loaded:
// NVML keeps threads and state that do not survive dlclose reliably, and a
// repeated dlopen of the same path only bumps a reference count.
std::vector<zl_kit::Device> enumerate_nvml(const std::string& path, std::string& reason) {
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* err = dlerror();
    reason = path + " not loadable (" + (err != nullptr ? err : "unknown error") + ")";
    return {};
  }
  Nvml nvml{};
  std::string missing;
  if (!bind(lib, "nvmlInit_v2", nvml.init, missing) || !bind(lib, "nvmlShutdown", nvml.shutdown, missing) ||
      !bind(lib, "nvmlDeviceGetCount_v2", nvml.count, missing) ||
      !bind(lib, "nvmlDeviceGetHandleByIndex_v2", nvml.handle, missing) ||
      !bind(lib, "nvmlDeviceGetName", nvml.name, missing) || !bind(lib, "nvmlDeviceGetUUID", nvml.uuid, missing) ||
      !bind(lib, "nvmlDeviceGetMemoryInfo", nvml.memory, missing) ||
      !bind(lib, "nvmlDeviceGetUtilizationRates", nvml.utilization, missing)) {
    reason = path + " lacks " + missing;
    return {};
  }
  nvml.error_string = reinterpret_cast<const char* (*)(nvmlReturn_t)>(dlsym(lib, "nvmlErrorString"));

  nvmlReturn_t rc = nvml.init();
  if (rc != kNvmlSuccess) {
    reason = nvml_error(nvml, "nvmlInit_v2", rc);
    return {};
  }
  std::vector<zl_kit::Device> devices;
  unsigned int count = 0;
  rc = nvml.count(&count);
  if (rc != kNvmlSuccess) reason = nvml_error(nvml, "nvmlDeviceGetCount_v2", rc);
  for (unsigned int i = 0; rc == kNvmlSuccess && i < count; ++i) {
    nvmlDevice_t dev = nullptr;
    rc = nvml.handle(i, &dev);
    if (rc != kNvmlSuccess) {
      reason = nvml_error(nvml, "nvmlDeviceGetHandleByIndex_v2", rc);
      break;
    }
    char uuid[kNvmlStringBuffer] = {};
    rc = nvml.uuid(dev, uuid, sizeof uuid);
    if (rc != kNvmlSuccess) {
      // Without a UUID the device cannot be pinned; let nvidia-smi speak.
      reason = nvml_error(nvml, "nvmlDeviceGetUUID", rc);
      break;
    }
    char name[kNvmlStringBuffer] = {};
    if (nvml.name(dev, name, sizeof name) != kNvmlSuccess) name[0] = '\0';
    uuid[sizeof uuid - 1] = '\0';
    name[sizeof name - 1] = '\0';
    nvmlMemory_t mem{};
    uint64_t total = 0;
    int64_t used = -1;
    if (nvml.memory(dev, &mem) == kNvmlSuccess) {
      total = mem.total;
      used = static_cast<int64_t>(mem.used);
    }
    nvmlUtilization_t util{};
    int32_t busy = -1;
    if (nvml.utilization(dev, &util) == kNvmlSuccess) busy = static_cast<int32_t>(util.gpu);
    devices.push_back(zl_cuda::device_from_nvml(static_cast<int32_t>(i), name, uuid, total, used, busy));
  }
  nvml.shutdown();
  if (rc != kNvmlSuccess) return {};
  if (devices.empty()) reason = "NVML reports no GPUs";
  return devices;
}

zl_kit::Enumeration enumerate() {
  zl_kit::Enumeration e;
  std::string tried;
  if (zl_kit::env_flag("ZL_CUDA_NO_NVML")) {
    tried = "NVML skipped (ZL_CUDA_NO_NVML=" + zl_kit::env_or("ZL_CUDA_NO_NVML", "") + ")";
  } else {
    const std::string lib = zl_kit::env_or("ZL_CUDA_NVML_LIB", "libnvidia-ml.so.1");
    e.devices = enumerate_nvml(lib, tried);
    if (!e.devices.empty()) {
      e.source = "library";
      return e;
    }
  }

  const std::string smi = zl_kit::env_or("ZL_CUDA_SMI", "nvidia-smi");
  zl_kit::ToolResult r = zl_kit::run_tool(
      {smi, std::string("--query-gpu=") + zl_cuda::kSmiQueryFields, "--format=csv,noheader,nounits"});
  if (!r.started || r.timed_out || r.term_signal != 0 || r.exit_code != 0) {
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
  if (e.devices.empty()) e.reason = tried + "; " + smi + " listed no GPUs";
  return e;
}

zl_error* enumerate_devices(zl_device_list** out) { return zl_kit::guarded_enumerate(out, enumerate); }
void destroy_list(zl_device_list* list) { zl_kit::destroy_device_list(list); }
void destroy_error(zl_error* error) { zl_kit::destroy_error(error); }

const char* const kAliases[] = {"nvidia", "gpu", nullptr};
const char* const kVisibility[] = {"CUDA_VISIBLE_DEVICES", nullptr};
const zl_capability kCapabilities[] = {
    {"graph_capture", "torch.cuda.CUDAGraph"},
    {"cluster_fix", "1"},
    {"device_events", "1"},
};

const zl_backend_api kApi = {
    sizeof(zl_backend_api),
    ZL_BACKEND_ABI_MAJOR,
    ZL_BACKEND_ABI_MINOR,
    "cuda",
    kAliases,
    kVisibility,
    kCapabilities,
    sizeof kCapabilities / sizeof kCapabilities[0],
    "cuda",
    "nvidia",
    enumerate_devices,
    destroy_list,
    destroy_error,
    "cuda 0.1.0",
};

}  // namespace

extern "C" ZL_BACKEND_EXPORT const zl_backend_api* zl_backend_get_api(uint32_t, uint32_t) { return &kApi; }
