// The host CPU as one device. Serves machines without an accelerator and the
// CPU targets of FlagGems; declares no device capabilities, so the planner
// gives it the wall-clock timer. ZL_HOST_PROC_ROOT points it at a recorded
// /proc for tests.
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "zl_kit/device_list.hpp"
#include "zl_kit/text.hpp"
#include "zl_kit/tool.hpp"

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// "key : value" lines, as /proc/cpuinfo and /proc/meminfo print them.
std::string field(const std::string& text, const std::string& key) {
  for (const std::string& line : zl_kit::split_lines(text)) {
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    if (zl_kit::trim(line.substr(0, colon)) == key) return zl_kit::trim(line.substr(colon + 1));
  }
  return {};
}

zl_error* enumerate(zl_device_list** out) {
  const std::string root = zl_kit::env_or("ZL_HOST_PROC_ROOT", "/proc");
  const std::string cpuinfo = read_file(root + "/cpuinfo");
  const std::string meminfo = read_file(root + "/meminfo");
  if (cpuinfo.empty() && meminfo.empty()) {
    *out = zl_kit::make_device_list({}, "host", "cannot read " + root + "/cpuinfo or " + root + "/meminfo");
    return nullptr;
  }

  zl_kit::Device cpu;
  cpu.index = 0;
  cpu.name = field(cpuinfo, "model name");
  if (cpu.name.empty()) cpu.name = field(cpuinfo, "Model name");  // some arm kernels
  if (cpu.name.empty()) cpu.name = "unknown CPU";
  int cores = 0;
  for (const std::string& line : zl_kit::split_lines(cpuinfo)) {
    if (zl_kit::starts_with(line, "processor")) ++cores;
  }
  if (cores == 0) cores = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  cpu.name += " (" + std::to_string(cores) + " cores)";
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  cpu.id = std::string("host:") + host;

  // meminfo values are "12345 kB".
  auto kib = [&](const char* key) -> int64_t {
    auto parts = zl_kit::split(field(meminfo, key), ' ');
    auto v = parts.empty() ? std::nullopt : zl_kit::parse_int(parts[0]);
    return v ? *v * 1024 : -1;
  };
  int64_t total = kib("MemTotal");
  int64_t avail = kib("MemAvailable");
  cpu.memory_total_bytes = total > 0 ? static_cast<uint64_t>(total) : 0;
  cpu.memory_used_bytes = (total > 0 && avail >= 0) ? total - avail : -1;
  *out = zl_kit::make_device_list({cpu}, "host", "");
  return nullptr;
}

void destroy_list(zl_device_list* list) { zl_kit::destroy_device_list(list); }
void destroy_error(zl_error* error) { zl_kit::destroy_error(error); }

const char* const kAliases[] = {"cpu", nullptr};

const zl_backend_api kApi = {
    sizeof(zl_backend_api),
    ZL_BACKEND_ABI_MAJOR,
    ZL_BACKEND_ABI_MINOR,
    "host",
    kAliases,
    nullptr,  // no visibility variable: the host is one device
    nullptr,
    0,        // no device capabilities
    "cpu",
    nullptr,  // FlagGems detects CPU vendors (arm, spacemit) itself
    enumerate,
    destroy_list,
    destroy_error,
    "host 0.1.0",
};

}  // namespace

extern "C" ZL_BACKEND_EXPORT const zl_backend_api* zl_backend_get_api(uint32_t, uint32_t) {
  return &kApi;
}
