#include "cuda_parse.hpp"

#include <set>
#include <vector>

#include "zl_kit/text.hpp"

namespace zl_cuda {
namespace {

constexpr uint64_t kMiB = 1024ull * 1024ull;

// nvidia-smi writes "[N/A]", "[Not Supported]", "[Unknown Error]" (and,
// in some versions, a bare "N/A") where it has no value.
bool unknown(const std::string& v) {
  return v.empty() || v == "N/A" || (v.front() == '[' && v.back() == ']');
}

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

}  // namespace

zl_kit::Device device_from_nvml(int32_t index, const std::string& name, const std::string& uuid,
                                uint64_t total_bytes, int64_t used_bytes, int32_t util_percent) {
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
      if (!v || *v < 0 || *v > 100) return zl_kit::ParseResult::fail(where + "utilization.gpu is not a percentage: " + util);
      d.utilization_percent = static_cast<int32_t>(*v);
    }
    result.devices.push_back(std::move(d));
  }
  return result;
}

}  // namespace zl_cuda
