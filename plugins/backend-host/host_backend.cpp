// The host CPU as one device. Serves machines without an accelerator and the
// CPU targets of FlagGems; declares no device capabilities, so the planner
// gives it the wall-clock timer. ZL_HOST_PROC_ROOT and ZL_HOST_SYS_ROOT point
// it at a recorded /proc and /sys for tests.
#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "zl_kit/enumeration.hpp"
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

// A /sys file holding one integer ("3600000\n"); nullopt when absent.
std::optional<int64_t> sys_int(const std::string& path) { return zl_kit::parse_int(zl_kit::trim(read_file(path))); }

std::string proc_root() { return zl_kit::env_or("ZL_HOST_PROC_ROOT", "/proc"); }
std::string sys_root() { return zl_kit::env_or("ZL_HOST_SYS_ROOT", "/sys"); }

// Readings of now: the first CPU's clock, the first thermal zone, memory.
std::vector<zl_kit::Value> readings(const std::string& sys) {
  std::vector<zl_kit::Value> out;
  if (auto khz = sys_int(sys + "/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq")) {
    out.push_back(zl_kit::Value::i64("clock_sm_mhz", *khz / 1000));
  }
  if (auto milli = sys_int(sys + "/class/thermal/thermal_zone0/temp")) {
    out.push_back(zl_kit::Value::i64("temperature_c", *milli / 1000));
  }
  return out;
}

zl_kit::Enumeration enumerate() {
  zl_kit::Enumeration e;
  e.source = "host";
  const std::string root = proc_root();
  const std::string sys = sys_root();
  const std::string cpuinfo = read_file(root + "/cpuinfo");
  const std::string meminfo = read_file(root + "/meminfo");
  if (cpuinfo.empty() && meminfo.empty()) {
    e.reason = "cannot read " + root + "/cpuinfo or " + root + "/meminfo";
    return e;
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

  struct utsname u {};
  if (uname(&u) == 0) cpu.attributes.push_back(zl_kit::Value::str("architecture", u.machine));
  // The kernel is the host's "driver": its release changes scheduling and clocks.
  const std::string kernel = zl_kit::trim(read_file(root + "/sys/kernel/osrelease"));
  if (!kernel.empty()) cpu.attributes.push_back(zl_kit::Value::str("driver_version", kernel));
  cpu.attributes.push_back(zl_kit::Value::i64("compute_units", cores));
  if (auto khz = sys_int(sys + "/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")) {
    cpu.attributes.push_back(zl_kit::Value::i64("clock_sm_max_mhz", *khz / 1000));
  }
  const std::string governor = zl_kit::trim(read_file(sys + "/devices/system/cpu/cpu0/cpufreq/scaling_governor"));
  if (!governor.empty()) cpu.attributes.push_back(zl_kit::Value::str("clocks_policy", governor));
  cpu.state = readings(sys);
  e.devices.push_back(std::move(cpu));
  return e;
}

zl_kit::State state(int32_t index, const std::string& id) { return zl_kit::state_from(enumerate(), index, id); }

const char* const kAliases[] = {"cpu", nullptr};

const zl_kit::BackendSpec kSpec = {
    "host",
    kAliases,
    nullptr,  // no visibility variable: the host is one device
    nullptr,
    0,  // no device capabilities
    "cpu",
    nullptr,  // FlagGems detects CPU vendors (arm, spacemit) itself
    ZL_BACKEND_VERSION,
    enumerate,
    state,
    nullptr,
    nullptr,
};

}  // namespace

ZL_KIT_BACKEND_ENTRY(kSpec)
