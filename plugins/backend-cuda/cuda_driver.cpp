#include "cuda_driver.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <mutex>

namespace zl_cuda {
namespace {

// The driver API declarations we need, written from the public reference
// rather than taken from cuda.h, so the build needs no NVIDIA headers.
using CUresult = int;
using CUdevice = int;
constexpr CUresult kCudaSuccess = 0;
constexpr int kAttributeL2CacheSize = 38;  // CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE
struct CUuuid {
  unsigned char bytes[16];
};

struct Driver {
  CUresult (*init)(unsigned) = nullptr;
  CUresult (*count)(int*) = nullptr;
  CUresult (*get)(CUdevice*, int) = nullptr;
  CUresult (*uuid)(CUuuid*, CUdevice) = nullptr;
  CUresult (*attribute)(int*, int, CUdevice) = nullptr;
};

template <class Fn>
void bind_symbol(void* lib, const char* symbol, Fn& fn) {
  fn = reinterpret_cast<Fn>(dlsym(lib, symbol));
}

std::map<std::string, int64_t> ask(const std::string& path) {
  std::map<std::string, int64_t> out;
  // The library stays loaded: the driver keeps threads that do not survive
  // dlclose.
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) return out;
  Driver d;
  bind_symbol(lib, "cuInit", d.init);
  bind_symbol(lib, "cuDeviceGetCount", d.count);
  bind_symbol(lib, "cuDeviceGet", d.get);
  bind_symbol(lib, "cuDeviceGetUuid_v2", d.uuid);
  if (d.uuid == nullptr) bind_symbol(lib, "cuDeviceGetUuid", d.uuid);
  bind_symbol(lib, "cuDeviceGetAttribute", d.attribute);
  if (!d.init || !d.count || !d.get || !d.uuid || !d.attribute || d.init(0) != kCudaSuccess) return out;
  int n = 0;
  if (d.count(&n) != kCudaSuccess) return out;
  for (int i = 0; i < n; ++i) {
    CUdevice dev = 0;
    CUuuid id{};
    int bytes = 0;
    if (d.get(&dev, i) != kCudaSuccess || d.uuid(&id, dev) != kCudaSuccess) continue;
    if (d.attribute(&bytes, kAttributeL2CacheSize, dev) != kCudaSuccess || bytes <= 0) continue;
    out[uuid_text(id.bytes)] = bytes;
  }
  return out;
}

}  // namespace

std::string uuid_text(const unsigned char b[16]) {
  char text[48];
  std::snprintf(text, sizeof text, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return text;
}

const std::map<std::string, int64_t>& driver_l2_bytes(const std::string& path) {
  static std::mutex mutex;
  static auto* asked = new std::map<std::string, std::map<std::string, int64_t>>();
  std::lock_guard<std::mutex> lock(mutex);
  auto it = asked->find(path);
  if (it == asked->end()) it = asked->emplace(path, ask(path)).first;
  return it->second;
}

void add_driver_attributes(std::vector<zl_kit::Device>& devices, const std::string& path) {
  const std::map<std::string, int64_t>& l2 = driver_l2_bytes(path);
  for (zl_kit::Device& d : devices) {
    auto it = l2.find(d.id);
    if (it != l2.end()) d.attributes.push_back(zl_kit::Value::i64("l2_cache_bytes", it->second));
  }
}

}  // namespace zl_cuda
