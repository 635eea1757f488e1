#include "cuda_parse.hpp"

#include <cstdlib>
#include <set>
#include <vector>

#include "cuda_peaks.hpp"
#include "zl_kit/text.hpp"

namespace zl_cuda {
namespace {

constexpr uint64_t kMiB = 1024ull * 1024ull;

// nvidia-smi writes "[N/A]", "[Not Supported]", "[Unknown Error]" (and,
// in some versions, a bare "N/A") where it has no value.
bool unknown(const std::string& v) { return v.empty() || v == "N/A" || (v.front() == '[' && v.back() == ']'); }

// Splits on the two-character separator nvidia-smi puts between fields.
std::vector<std::string> split_fields(std::string_view line) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t at = line.find(", ", start);
    if (at == std::string_view::npos) {
      out.push_back(zl_kit::trim(line.substr(start)));
      return out;
    }
    out.push_back(zl_kit::trim(line.substr(start, at - start)));
    start = at + 2;
  }
}

enum class Kind { Text, Int, Real, Flag, Hex, MiB, Skip };

// One --query-gpu line per GPU: the UUID, then `kinds.size()` fields.
bool parse_values(std::string_view text, const std::vector<std::pair<const char*, Kind>>& kinds, ValuesByUuid& out,
                  std::string& error) {
  int line_no = 0;
  for (const std::string& raw : zl_kit::split_lines(text)) {
    ++line_no;
    const std::string line = zl_kit::trim(raw);
    if (line.empty()) continue;
    const std::string where = "line " + std::to_string(line_no) + ": ";
    std::vector<std::string> f = split_fields(line);
    if (f.size() != kinds.size() + 1) {
      error = where + "expected " + std::to_string(kinds.size() + 1) + " fields, got " + std::to_string(f.size());
      return false;
    }
    if (!zl_kit::starts_with(f[0], "GPU-")) {
      error = where + "not a GPU UUID: " + f[0];
      return false;
    }
    std::vector<zl_kit::Value>& values = out[f[0]];
    for (size_t i = 0; i < kinds.size(); ++i) {
      const std::string& v = f[i + 1];
      // Named, not a structured binding: C++17 lets no lambda capture one.
      const char* name = kinds[i].first;
      const Kind kind = kinds[i].second;
      if (unknown(v) || kind == Kind::Skip) continue;
      auto bad = [&] {
        error = where + name + " is not a number: " + v;
        return false;
      };
      switch (kind) {
        case Kind::Text: values.push_back(zl_kit::Value::str(name, v)); break;
        case Kind::Int: {
          auto n = zl_kit::parse_int(v);
          if (!n) return bad();
          values.push_back(zl_kit::Value::i64(name, *n));
          break;
        }
        case Kind::MiB: {
          auto n = zl_kit::parse_int(v);
          if (!n) return bad();
          values.push_back(zl_kit::Value::i64(name, *n * static_cast<int64_t>(kMiB)));
          break;
        }
        case Kind::Real: {
          auto d = zl_kit::parse_double(v);
          if (!d) return bad();
          values.push_back(zl_kit::Value::f64(name, *d));
          break;
        }
        case Kind::Flag: values.push_back(zl_kit::Value::flag(name, v == "Enabled")); break;
        case Kind::Hex: {
          char* end = nullptr;
          const unsigned long long bits = std::strtoull(v.c_str(), &end, 16);
          if (end == v.c_str() || *end != '\0') return bad();
          values.push_back(zl_kit::Value::str(name, throttle_reason_names(bits)));
          break;
        }
        case Kind::Skip: break;
      }
    }
  }
  return true;
}

}  // namespace

bool parse_smi_attributes(std::string_view text, ValuesByUuid& out, std::string& error) {
  return parse_values(text,
                      {{"driver_version", Kind::Text},
                       {"compute_capability", Kind::Text},
                       {"clock_sm_max_mhz", Kind::Int},
                       {"clock_memory_max_mhz", Kind::Int},
                       {"power_limit_w", Kind::Real},
                       {"ecc_enabled", Kind::Flag},
                       {"bus_id", Kind::Text}},
                      out, error);
}

bool parse_smi_state(std::string_view text, ValuesByUuid& out, std::string& error) {
  return parse_values(text,
                      {{"clock_sm_mhz", Kind::Int},
                       {"clock_memory_mhz", Kind::Int},
                       {"power_draw_w", Kind::Real},
                       {"temperature_c", Kind::Int},
                       {"throttle_reasons", Kind::Hex},
                       {"utilization_percent", Kind::Int},
                       {"memory_used_bytes", Kind::MiB}},
                      out, error);
}

zl_kit::Device device_from_nvml(int32_t index, const std::string& name, const std::string& uuid, uint64_t total_bytes,
                                int64_t used_bytes, int32_t util_percent) {
  zl_kit::Device d;
  d.index = index;
  d.id = uuid;
  d.name = name.empty() ? "unknown NVIDIA GPU" : name;
  d.memory_total_bytes = total_bytes;
  d.memory_used_bytes = used_bytes;
  d.utilization_percent = (util_percent >= 0 && util_percent <= 100) ? util_percent : -1;
  d.visibility_value = uuid;
  return d;
}

zl_kit::ParseResult parse_nvidia_smi_csv(std::string_view text) {
  zl_kit::ParseResult result;
  std::set<std::string> seen;
  int line_no = 0;
  for (const std::string& raw : zl_kit::split_lines(text)) {
    ++line_no;
    const std::string line = zl_kit::trim(raw);
    if (line.empty()) continue;
    const std::string where = "line " + std::to_string(line_no) + ": ";
    std::vector<std::string> f = split_fields(line);
    if (f.size() < 6) {
      return zl_kit::ParseResult::fail(where + "expected 6 fields, got " + std::to_string(f.size()));
    }
    // A name may itself contain ", "; the fields around it are fixed.
    const size_t n = f.size();
    std::string name = f[2];
    for (size_t i = 3; i + 3 < n; ++i) name += ", " + f[i];
    const std::string& mem_total = f[n - 3];
    const std::string& mem_used = f[n - 2];
    const std::string& util = f[n - 1];

    auto index = zl_kit::parse_int(f[0]);
    if (!index || *index < 0) return zl_kit::ParseResult::fail(where + "index is not a number: " + f[0]);
    const std::string& uuid = f[1];
    if (unknown(uuid) || !zl_kit::starts_with(uuid, "GPU-")) {
      // MIG instances print "MIG-..."; a whole GPU always has "GPU-".
      return zl_kit::ParseResult::fail(where + "not a GPU UUID: " + uuid);
    }
    if (!seen.insert(uuid).second) return zl_kit::ParseResult::fail(where + "duplicate UUID " + uuid);

    zl_kit::Device d;
    d.index = static_cast<int32_t>(*index);
    d.id = uuid;
    d.name = unknown(name) ? "unknown NVIDIA GPU" : name;
    d.visibility_value = uuid;
    if (!unknown(mem_total)) {
      auto v = zl_kit::parse_int(mem_total);
      if (!v || *v < 0) return zl_kit::ParseResult::fail(where + "memory.total is not a number: " + mem_total);
      d.memory_total_bytes = static_cast<uint64_t>(*v) * kMiB;
    }
    if (!unknown(mem_used)) {
      auto v = zl_kit::parse_int(mem_used);
      if (!v || *v < 0) return zl_kit::ParseResult::fail(where + "memory.used is not a number: " + mem_used);
      d.memory_used_bytes = *v * static_cast<int64_t>(kMiB);
    }
    if (!unknown(util)) {
      auto v = zl_kit::parse_int(util);
      if (!v || *v < 0 || *v > 100)
        return zl_kit::ParseResult::fail(where + "utilization.gpu is not a percentage: " + util);
      d.utilization_percent = static_cast<int32_t>(*v);
    }
    result.devices.push_back(std::move(d));
  }
  return result;
}

}  // namespace zl_cuda
