#include "cuda_nvml.hpp"

#include <dlfcn.h>

#include <map>
#include <memory>
#include <mutex>

#include "cuda_parse.hpp"
#include "cuda_peaks.hpp"

namespace zl_cuda {
namespace {

// The NVML declarations we need, written from the public API reference
// rather than taken from nvml.h, so the build needs no NVIDIA headers.
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr unsigned kNvmlStringBuffer = 96;  // NVML_DEVICE_{NAME,UUID}_V2_BUFFER_SIZE
constexpr unsigned kClockSm = 1;            // NVML_CLOCK_SM
constexpr unsigned kClockMem = 2;           // NVML_CLOCK_MEM
constexpr unsigned kTemperatureGpu = 0;     // NVML_TEMPERATURE_GPU
struct nvmlMemory_t {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
struct nvmlUtilization_t {
  unsigned int gpu;
  unsigned int memory;
};
// nvmlPciInfo_t as nvmlDeviceGetPciInfo_v3 fills it; `spare` only guards
// against a library writing more than the layout we know.
struct nvmlPciInfo_t {
  char bus_id_legacy[16];
  unsigned int domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
  char spare[64];
};

struct Nvml {
  void* lib = nullptr;
  // Required: without these the library is not used.
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  nvmlReturn_t (*count)(unsigned int*) = nullptr;
  nvmlReturn_t (*handle)(unsigned int, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*name)(nvmlDevice_t, char*, unsigned int) = nullptr;
  nvmlReturn_t (*uuid)(nvmlDevice_t, char*, unsigned int) = nullptr;
  nvmlReturn_t (*memory)(nvmlDevice_t, nvmlMemory_t*) = nullptr;
  nvmlReturn_t (*utilization)(nvmlDevice_t, nvmlUtilization_t*) = nullptr;
  // Optional: a driver that lacks one just leaves that attribute out.
  const char* (*error_string)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*driver_version)(char*, unsigned int) = nullptr;
  nvmlReturn_t (*cuda_version)(int*) = nullptr;
  nvmlReturn_t (*compute_capability)(nvmlDevice_t, int*, int*) = nullptr;
  nvmlReturn_t (*num_cores)(nvmlDevice_t, unsigned int*) = nullptr;
  nvmlReturn_t (*max_clock)(nvmlDevice_t, unsigned int, unsigned int*) = nullptr;
  nvmlReturn_t (*clock)(nvmlDevice_t, unsigned int, unsigned int*) = nullptr;
  nvmlReturn_t (*app_clock)(nvmlDevice_t, unsigned int, unsigned int*) = nullptr;
  nvmlReturn_t (*bus_width)(nvmlDevice_t, unsigned int*) = nullptr;
  nvmlReturn_t (*power_limit)(nvmlDevice_t, unsigned int*) = nullptr;
  nvmlReturn_t (*power_usage)(nvmlDevice_t, unsigned int*) = nullptr;
  nvmlReturn_t (*ecc_mode)(nvmlDevice_t, int*, int*) = nullptr;
  nvmlReturn_t (*pci_info)(nvmlDevice_t, nvmlPciInfo_t*) = nullptr;
  nvmlReturn_t (*temperature)(nvmlDevice_t, unsigned int, unsigned int*) = nullptr;
  nvmlReturn_t (*event_reasons)(nvmlDevice_t, unsigned long long*) = nullptr;
};

template <class Fn>
void bind(void* lib, const char* symbol, Fn& fn) {
  fn = reinterpret_cast<Fn>(dlsym(lib, symbol));
}

std::string nvml_error(const Nvml& nvml, const char* call, nvmlReturn_t rc) {
  std::string text = std::string(call) + " returned " + std::to_string(rc);
  if (nvml.error_string != nullptr) {
    const char* s = nvml.error_string(rc);
    if (s != nullptr) text += " (" + std::string(s) + ")";
  }
  return text;
}

// Initialized libraries by path. The library stays loaded: NVML keeps
// threads and state that do not survive dlclose reliably.
std::mutex g_mutex;
std::map<std::string, std::shared_ptr<Nvml>>& sessions() {
  static auto* m = new std::map<std::string, std::shared_ptr<Nvml>>();
  return *m;
}

std::shared_ptr<Nvml> open_session(const std::string& path, std::string& why) {
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = sessions().find(path);
  if (it != sessions().end()) return it->second;
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* err = dlerror();
    why = path + " not loadable (" + (err != nullptr ? err : "unknown error") + ")";
    return nullptr;
  }
  auto n = std::make_shared<Nvml>();
  n->lib = lib;
  bind(lib, "nvmlInit_v2", n->init);
  bind(lib, "nvmlShutdown", n->shutdown);
  bind(lib, "nvmlDeviceGetCount_v2", n->count);
  bind(lib, "nvmlDeviceGetHandleByIndex_v2", n->handle);
  bind(lib, "nvmlDeviceGetName", n->name);
  bind(lib, "nvmlDeviceGetUUID", n->uuid);
  bind(lib, "nvmlDeviceGetMemoryInfo", n->memory);
  bind(lib, "nvmlDeviceGetUtilizationRates", n->utilization);
  const std::pair<const char*, bool> required[] = {
      {"nvmlInit_v2", n->init != nullptr},
      {"nvmlShutdown", n->shutdown != nullptr},
      {"nvmlDeviceGetCount_v2", n->count != nullptr},
      {"nvmlDeviceGetHandleByIndex_v2", n->handle != nullptr},
      {"nvmlDeviceGetName", n->name != nullptr},
      {"nvmlDeviceGetUUID", n->uuid != nullptr},
      {"nvmlDeviceGetMemoryInfo", n->memory != nullptr},
      {"nvmlDeviceGetUtilizationRates", n->utilization != nullptr},
  };
  for (const auto& [symbol, present] : required) {
    if (!present) {
      why = path + " lacks " + symbol;
      return nullptr;
    }
  }
  bind(lib, "nvmlErrorString", n->error_string);
  bind(lib, "nvmlSystemGetDriverVersion", n->driver_version);
  bind(lib, "nvmlSystemGetCudaDriverVersion_v2", n->cuda_version);
  bind(lib, "nvmlDeviceGetCudaComputeCapability", n->compute_capability);
  bind(lib, "nvmlDeviceGetNumGpuCores", n->num_cores);
  bind(lib, "nvmlDeviceGetMaxClockInfo", n->max_clock);
  bind(lib, "nvmlDeviceGetClockInfo", n->clock);
  bind(lib, "nvmlDeviceGetApplicationsClock", n->app_clock);
  bind(lib, "nvmlDeviceGetMemoryBusWidth", n->bus_width);
  bind(lib, "nvmlDeviceGetEnforcedPowerLimit", n->power_limit);
  bind(lib, "nvmlDeviceGetPowerUsage", n->power_usage);
  bind(lib, "nvmlDeviceGetEccMode", n->ecc_mode);
  bind(lib, "nvmlDeviceGetPciInfo_v3", n->pci_info);
  bind(lib, "nvmlDeviceGetTemperature", n->temperature);
  // Renamed in recent drivers ("throttle" became "event"); either will do.
  bind(lib, "nvmlDeviceGetCurrentClocksEventReasons", n->event_reasons);
  if (n->event_reasons == nullptr) bind(lib, "nvmlDeviceGetCurrentClocksThrottleReasons", n->event_reasons);

  const nvmlReturn_t rc = n->init();
  if (rc != kNvmlSuccess) {
    why = nvml_error(*n, "nvmlInit_v2", rc);
    return nullptr;  // not cached: the driver may be loaded by the next call
  }
  sessions()[path] = n;
  return n;
}

std::vector<zl_kit::Value> attributes(const Nvml& n, nvmlDevice_t dev) {
  std::vector<zl_kit::Value> out;
  using V = zl_kit::Value;
  char text[kNvmlStringBuffer] = {};
  if (n.driver_version != nullptr && n.driver_version(text, sizeof text) == kNvmlSuccess) {
    text[sizeof text - 1] = '\0';
    out.push_back(V::str("driver_version", text));
  }
  int cuda = 0;
  if (n.cuda_version != nullptr && n.cuda_version(&cuda) == kNvmlSuccess && cuda > 0) {
    out.push_back(V::str("runtime_version", std::to_string(cuda / 1000) + "." + std::to_string(cuda % 1000 / 10)));
  }
  int major = -1, minor = -1;
  if (n.compute_capability != nullptr && n.compute_capability(dev, &major, &minor) == kNvmlSuccess) {
    out.push_back(V::str("compute_capability", std::to_string(major) + "." + std::to_string(minor)));
    const std::string arch = architecture_of(major, minor);
    if (!arch.empty()) out.push_back(V::str("architecture", arch));
  }
  int64_t sms = 0;
  unsigned cores = 0;
  if (n.num_cores != nullptr && n.num_cores(dev, &cores) == kNvmlSuccess && cores > 0) {
    out.push_back(V::i64("cuda_cores", cores));
    const int per_sm = cores_per_sm(major, minor);
    if (per_sm > 0) {
      sms = cores / per_sm;
      out.push_back(V::i64("compute_units", sms));
    }
  }
  unsigned sm_max = 0, mem_max = 0, width = 0, app = 0, mw = 0;
  if (n.max_clock != nullptr && n.max_clock(dev, kClockSm, &sm_max) == kNvmlSuccess) {
    out.push_back(V::i64("clock_sm_max_mhz", sm_max));
  }
  if (n.max_clock != nullptr && n.max_clock(dev, kClockMem, &mem_max) == kNvmlSuccess) {
    out.push_back(V::i64("clock_memory_max_mhz", mem_max));
  }
  if (n.app_clock != nullptr && n.app_clock(dev, kClockSm, &app) == kNvmlSuccess) {
    out.push_back(V::i64("clock_sm_application_mhz", app));
  }
  if (n.bus_width != nullptr && n.bus_width(dev, &width) == kNvmlSuccess) {
    out.push_back(V::i64("memory_bus_width_bits", width));
  }
  const double bw = memory_bandwidth_gbps(mem_max, width);
  if (bw > 0) {
    out.push_back(V::f64("memory_bandwidth_peak_gbps", bw));
    out.push_back(V::str("memory_bandwidth_source", "NVML max memory clock x 2 (double data rate) x bus width"));
  }
  std::vector<V> peaks = compute_peaks(major, minor, sms, sm_max);
  if (!peaks.empty()) {
    out.insert(out.end(), peaks.begin(), peaks.end());
    out.push_back(V::str("compute_peak_source", "per-SM dense rate for compute capability " + std::to_string(major) +
                                                    "." + std::to_string(minor) +
                                                    " (table in the cuda backend) x SMs x max SM clock"));
  }
  if (n.power_limit != nullptr && n.power_limit(dev, &mw) == kNvmlSuccess) {
    out.push_back(V::f64("power_limit_w", mw / 1000.0));
  }
  int ecc = 0, pending = 0;
  if (n.ecc_mode != nullptr && n.ecc_mode(dev, &ecc, &pending) == kNvmlSuccess) {
    out.push_back(V::flag("ecc_enabled", ecc != 0));
  }
  nvmlPciInfo_t pci{};
  if (n.pci_info != nullptr && n.pci_info(dev, &pci) == kNvmlSuccess) {
    pci.bus_id[sizeof pci.bus_id - 1] = '\0';
    out.push_back(V::str("bus_id", pci.bus_id));
  }
  return out;
}

}  // namespace

std::string nvml_open(const std::string& path) {
  std::string why;
  return open_session(path, why) != nullptr ? std::string() : why;
}

std::vector<zl_kit::Device> nvml_devices(const std::string& path, std::string& reason) {
  std::shared_ptr<Nvml> session = open_session(path, reason);
  if (session == nullptr) return {};
  const Nvml& nvml = *session;
  std::vector<zl_kit::Device> devices;
  unsigned int count = 0;
  nvmlReturn_t rc = nvml.count(&count);
  if (rc != kNvmlSuccess) {
    reason = nvml_error(nvml, "nvmlDeviceGetCount_v2", rc);
    return {};
  }
  for (unsigned int i = 0; i < count; ++i) {
    nvmlDevice_t dev = nullptr;
    rc = nvml.handle(i, &dev);
    if (rc != kNvmlSuccess) {
      reason = nvml_error(nvml, "nvmlDeviceGetHandleByIndex_v2", rc);
      return {};
    }
    char uuid[kNvmlStringBuffer] = {};
    rc = nvml.uuid(dev, uuid, sizeof uuid);
    if (rc != kNvmlSuccess) {
      // Without a UUID the device cannot be pinned; let nvidia-smi speak.
      reason = nvml_error(nvml, "nvmlDeviceGetUUID", rc);
      return {};
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
    zl_kit::Device d = device_from_nvml(static_cast<int32_t>(i), name, uuid, total, used, busy);
    d.attributes = attributes(nvml, dev);
    devices.push_back(std::move(d));
  }
  if (devices.empty()) reason = "NVML reports no GPUs";
  return devices;
}

zl_kit::State nvml_state(const std::string& path, int32_t index, const std::string& uuid) {
  std::string why;
  std::shared_ptr<Nvml> session = open_session(path, why);
  if (session == nullptr) return zl_kit::State::fail(ZL_ERROR_UNAVAILABLE, why);
  const Nvml& n = *session;
  nvmlDevice_t dev = nullptr;
  char got[kNvmlStringBuffer] = {};
  if (index < 0 || n.handle(static_cast<unsigned>(index), &dev) != kNvmlSuccess ||
      n.uuid(dev, got, sizeof got) != kNvmlSuccess || uuid != got) {
    return zl_kit::State::fail(ZL_ERROR_INVALID_ARGUMENT,
                               "no GPU with index " + std::to_string(index) + " and UUID " + uuid + " now");
  }
  using V = zl_kit::Value;
  zl_kit::State s;
  unsigned v = 0;
  if (n.clock != nullptr && n.clock(dev, kClockSm, &v) == kNvmlSuccess) s.values.push_back(V::i64("clock_sm_mhz", v));
  if (n.clock != nullptr && n.clock(dev, kClockMem, &v) == kNvmlSuccess) {
    s.values.push_back(V::i64("clock_memory_mhz", v));
  }
  if (n.power_usage != nullptr && n.power_usage(dev, &v) == kNvmlSuccess) {
    s.values.push_back(V::f64("power_draw_w", v / 1000.0));
  }
  if (n.temperature != nullptr && n.temperature(dev, kTemperatureGpu, &v) == kNvmlSuccess) {
    s.values.push_back(V::i64("temperature_c", v));
  }
  unsigned long long reasons = 0;
  if (n.event_reasons != nullptr && n.event_reasons(dev, &reasons) == kNvmlSuccess) {
    s.values.push_back(V::str("throttle_reasons", throttle_reason_names(reasons)));
  }
  nvmlUtilization_t util{};
  if (n.utilization(dev, &util) == kNvmlSuccess) s.values.push_back(V::i64("utilization_percent", util.gpu));
  nvmlMemory_t mem{};
  if (n.memory(dev, &mem) == kNvmlSuccess) {
    s.values.push_back(V::i64("memory_used_bytes", static_cast<int64_t>(mem.used)));
  }
  return s;
}

void nvml_close_all() {
  std::lock_guard<std::mutex> lock(g_mutex);
  for (auto& [path, n] : sessions()) n->shutdown();
  sessions().clear();
}

}  // namespace zl_cuda
