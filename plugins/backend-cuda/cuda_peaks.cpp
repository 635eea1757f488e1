#include "cuda_peaks.hpp"

namespace zl_cuda {
namespace {

struct Rates {
  int major, minor;
  const char* architecture;
  int cores_per_sm;
  // Dense operations per SM per clock (an FMA counts two); 0: not published.
  double float16, bfloat16, tfloat32, float32, float64, int8;
};

// From NVIDIA's architecture whitepapers (A100: 312 TFLOPS fp16 dense on 108
// SMs at 1410 MHz = 2048/SM/clk; H100 SXM: 989 at 1830 MHz on 132 SMs = 4096).
// Only the data-center parts whose per-SM rates are published are listed:
// consumer parts of the same capability differ in tensor throughput.
constexpr Rates kRates[] = {
    {7, 0, "volta", 64, 1024, 0, 0, 128, 64, 0},
    {8, 0, "ampere", 64, 2048, 2048, 1024, 128, 128, 4096},
    {9, 0, "hopper", 128, 4096, 4096, 2048, 256, 256, 8192},
};

// Architectures known by capability without published per-SM rates here.
struct Named {
  int major, minor;
  const char* architecture;
  int cores_per_sm;
};
constexpr Named kNames[] = {
    {7, 5, "turing", 64}, {8, 6, "ampere", 128},     {8, 7, "ampere", 128},
    {8, 9, "ada", 128},   {10, 0, "blackwell", 128}, {12, 0, "blackwell", 128},
};

const Rates* rates(int major, int minor) {
  for (const Rates& r : kRates) {
    if (r.major == major && r.minor == minor) return &r;
  }
  return nullptr;
}

}  // namespace

std::string architecture_of(int major, int minor) {
  if (const Rates* r = rates(major, minor)) return r->architecture;
  for (const Named& n : kNames) {
    if (n.major == major && n.minor == minor) return n.architecture;
  }
  return {};
}

int cores_per_sm(int major, int minor) {
  if (const Rates* r = rates(major, minor)) return r->cores_per_sm;
  for (const Named& n : kNames) {
    if (n.major == major && n.minor == minor) return n.cores_per_sm;
  }
  return 0;
}

double memory_bandwidth_gbps(int64_t clock_mhz, int64_t width_bits) {
  if (clock_mhz <= 0 || width_bits <= 0) return 0;
  return static_cast<double>(clock_mhz) * 1e6 * 2.0 * static_cast<double>(width_bits) / 8.0 / 1e9;
}

std::vector<zl_kit::Value> compute_peaks(int major, int minor, int64_t sms, int64_t clock_mhz) {
  std::vector<zl_kit::Value> out;
  const Rates* r = rates(major, minor);
  if (r == nullptr || sms <= 0 || clock_mhz <= 0) return out;
  const double per_rate = static_cast<double>(sms) * static_cast<double>(clock_mhz) * 1e6 / 1e12;
  const std::pair<const char*, double> each[] = {{"float16", r->float16},   {"bfloat16", r->bfloat16},
                                                 {"tfloat32", r->tfloat32}, {"float32", r->float32},
                                                 {"float64", r->float64},   {"int8", r->int8}};
  for (const auto& [dtype, rate] : each) {
    if (rate > 0) out.push_back(zl_kit::Value::f64(std::string("compute_peak_tflops.") + dtype, rate * per_rate));
  }
  return out;
}

std::string throttle_reason_names(unsigned long long bits) {
  // nvmlClocksEventReasons (nvml.h), lowest bit first.
  static const char* const kNames[] = {"idle",       "app_clocks", "sw_power_cap",   "hw_slowdown",   "sync_boost",
                                       "sw_thermal", "hw_thermal", "hw_power_brake", "display_clocks"};
  if (bits == 0) return "none";
  std::string out;
  for (unsigned i = 0; i < 64; ++i) {
    if ((bits & (1ull << i)) == 0) continue;
    if (!out.empty()) out += ",";
    out += i < sizeof kNames / sizeof kNames[0] ? kNames[i] : "bit" + std::to_string(i);
  }
  return out;
}

}  // namespace zl_cuda
