#include "rocm_parse.hpp"

#include <cctype>
#include <set>
#include <utility>

#include "zl_kit/json.hpp"
#include "zl_kit/text.hpp"

namespace zl_rocm {
namespace {

constexpr uint64_t kMiB = 1024ull * 1024ull;

bool all_hex(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

bool missing(const std::string& v) { return v.empty() || zl_kit::iequals(v, "N/A"); }

std::string text_of(const zl_kit::Json& obj, std::string_view key) {
  const zl_kit::Json* v = obj.iget(key);
  return v != nullptr ? zl_kit::trim(v->scalar_text()) : std::string();
}

// ROCR's own spelling of a device UUID: "GPU-" and hex digits.
bool rocr_uuid(const std::string& v) { return v.size() > 4 && zl_kit::starts_with(v, "GPU-") && all_hex(v.substr(4)); }

// The array of per-GPU objects, bare or under "gpu_data".
const zl_kit::Json* gpu_array(const zl_kit::Json& doc) {
  if (doc.is_array()) return &doc;
  const zl_kit::Json* inner = doc.iget("gpu_data");
  return (inner != nullptr && inner->is_array()) ? inner : nullptr;
}

std::optional<zl_kit::Json> parse_json(std::string_view text, char open, std::string& error) {
  // Tools print warnings ("WARNING: AMD GPU device(s) is/are in a low-power
  // state") ahead of the document; start at the first bracket.
  size_t at = text.find(open);
  if (at == std::string_view::npos) {
    error = std::string("no JSON ") + (open == '[' ? "array" : "object") + " in the output";
    return std::nullopt;
  }
  return zl_kit::Json::parse(text.substr(at), &error);
}

// amd-smi prints a quantity as {"value": 5300, "unit": "GB/s"} or, in
// older versions, as the text "5300 GB/s"; without a unit, `fallback`.
std::pair<std::string, std::string> number_and_unit(const zl_kit::Json& v, const char* fallback) {
  if (v.is_object()) {
    const zl_kit::Json* value = v.iget("value");
    const zl_kit::Json* u = v.iget("unit");
    if (value == nullptr) return {};
    return {value->scalar_text(), u != nullptr ? u->scalar_text() : fallback};
  }
  auto parts = zl_kit::split(zl_kit::trim(v.scalar_text()), ' ');
  if (parts.empty()) return {};
  return {parts[0], parts.size() > 1 ? parts[1] : fallback};
}

// A size written as {"value": 196592, "unit": "MB"} or "196592 MB". amd-smi's
// "MB" is MiB (196592 MB on a 192 GiB MI300X).
std::optional<uint64_t> size_bytes(const zl_kit::Json& v) {
  const auto [number, unit] = number_and_unit(v, "MB");
  auto n = zl_kit::parse_int(number);
  if (!n || *n < 0) return std::nullopt;
  const std::string u = zl_kit::to_lower(unit);
  uint64_t scale = 0;
  if (u == "b")
    scale = 1;
  else if (u == "kb" || u == "kib")
    scale = 1024;
  else if (u == "mb" || u == "mib")
    scale = kMiB;
  else if (u == "gb" || u == "gib")
    scale = kMiB * 1024;
  else
    return std::nullopt;
  return static_cast<uint64_t>(*n) * scale;
}

}  // namespace

std::string rocr_uuid_from_unique_id(const std::string& unique_id) {
  std::string hex = zl_kit::trim(unique_id);
  if (zl_kit::starts_with(zl_kit::to_lower(hex), "0x")) hex = hex.substr(2);
  if (!all_hex(hex)) return {};
  return "GPU-" + zl_kit::to_lower(hex);
}

zl_kit::ParseResult parse_amd_smi_list(std::string_view text) {
  std::string error;
  auto doc = parse_json(text, text.find('{') < text.find('[') ? '{' : '[', error);
  if (!doc) return zl_kit::ParseResult::fail(error);
  const zl_kit::Json* gpus = gpu_array(*doc);
  if (gpus == nullptr) return zl_kit::ParseResult::fail("expected an array of GPUs");

  zl_kit::ParseResult result;
  std::set<int64_t> seen;
  for (const zl_kit::Json& g : gpus->items()) {
    if (!g.is_object()) return zl_kit::ParseResult::fail("a GPU entry is not an object");
    const zl_kit::Json* gpu = g.iget("gpu");
    auto index = gpu != nullptr ? gpu->as_int() : std::nullopt;
    if (!index || *index < 0) return zl_kit::ParseResult::fail("a GPU entry has no \"gpu\" number");
    if (!seen.insert(*index).second)
      return zl_kit::ParseResult::fail("gpu " + std::to_string(*index) + " listed twice");

    const std::string bdf = text_of(g, "bdf");
    const std::string uuid = text_of(g, "uuid");
    const std::string hip_uuid = text_of(g, "hip_uuid");
    const zl_kit::Json* hip_id = g.iget("hip_id");
    // -1: no HIP index (absent, not a number, or negative).
    const long long hip_index = hip_id != nullptr ? hip_id->as_int().value_or(-1) : -1;

    zl_kit::Device d;
    d.index = static_cast<int32_t>(*index);
    // The PCI address outlives driver reloads and reboots; the amd-smi UUID
    // is the next best thing.
    d.id = !missing(bdf) ? bdf : (!missing(uuid) ? uuid : "gpu" + std::to_string(*index));
    if (!missing(bdf)) d.attributes.push_back(zl_kit::Value::str("bus_id", bdf));
    d.name = "unknown AMD GPU";
    if (rocr_uuid(hip_uuid))
      d.visibility_value = hip_uuid;
    else if (hip_index >= 0)
      d.visibility_value = std::to_string(hip_index);
    else
      d.visibility_value = std::to_string(*index);
    result.devices.push_back(std::move(d));
  }
  return result;
}

// amd-smi static's vram.max_bandwidth (the vendor's figure for the board) in GB/s.
std::optional<double> bandwidth_gbps(const zl_kit::Json& v) {
  const auto [number, unit] = number_and_unit(v, "GB/s");
  auto n = zl_kit::parse_double(number);
  if (!n || *n <= 0) return std::nullopt;
  const std::string u = zl_kit::to_lower(unit);
  if (u == "gb/s") return *n;
  if (u == "tb/s") return *n * 1000.0;
  if (u == "mb/s") return *n / 1000.0;
  return std::nullopt;  // a unit we do not know is no figure, not a guess
}

// The instruction-set generation behind a gfx target, where AMD names one.
std::string architecture_of(const std::string& target) {
  static const std::pair<const char*, const char*> kByTarget[] = {
      {"gfx908", "cdna"},   {"gfx90a", "cdna2"},  {"gfx940", "cdna3"},  {"gfx941", "cdna3"},
      {"gfx942", "cdna3"},  {"gfx950", "cdna4"},  {"gfx1030", "rdna2"}, {"gfx1100", "rdna3"},
      {"gfx1101", "rdna3"}, {"gfx1102", "rdna3"}, {"gfx1200", "rdna4"}, {"gfx1201", "rdna4"},
  };
  for (const auto& [gfx, arch] : kByTarget) {
    if (target == gfx) return arch;
  }
  return "";
}

std::string merge_amd_smi_static(std::string_view text, std::vector<zl_kit::Device>& devices) {
  std::string error;
  auto doc = parse_json(text, text.find('{') < text.find('[') ? '{' : '[', error);
  if (!doc) return error;
  const zl_kit::Json* gpus = gpu_array(*doc);
  if (gpus == nullptr) return "expected an array of GPUs";
  for (const zl_kit::Json& g : gpus->items()) {
    const zl_kit::Json* gpu = g.iget("gpu");
    auto index = gpu != nullptr ? gpu->as_int() : std::nullopt;
    if (!index) continue;
    for (zl_kit::Device& d : devices) {
      if (d.index != *index) continue;
      if (const zl_kit::Json* asic = g.iget("asic")) {
        const std::string name = text_of(*asic, "market_name");
        if (!missing(name)) d.name = name;
        // The gfx target is ROCm's compute capability ("gfx942").
        const std::string target = text_of(*asic, "target_graphics_version");
        if (!missing(target)) d.attributes.push_back(zl_kit::Value::str("compute_capability", target));
        if (const std::string arch = architecture_of(target); !arch.empty()) {
          d.attributes.push_back(zl_kit::Value::str("architecture", arch));
        }
        if (auto cus = asic->iget("num_compute_units") ? asic->iget("num_compute_units")->as_int() : std::nullopt) {
          d.attributes.push_back(zl_kit::Value::i64("compute_units", *cus));
        }
      }
      if (const zl_kit::Json* vram = g.iget("vram")) {
        const zl_kit::Json* size = vram->iget("size");
        if (size == nullptr) size = vram->iget("vram_size");
        if (size != nullptr) {
          if (auto bytes = size_bytes(*size)) d.memory_total_bytes = *bytes;
        } else if (const zl_kit::Json* mb = vram->iget("vram_size_mb")) {
          if (auto v = mb->as_int(); v && *v >= 0) d.memory_total_bytes = static_cast<uint64_t>(*v) * kMiB;
        }
        if (const zl_kit::Json* bits = vram->iget("bit_width")) {
          if (auto v = bits->as_int(); v && *v > 0)
            d.attributes.push_back(zl_kit::Value::i64("memory_bus_width_bits", *v));
        }
        if (const zl_kit::Json* bw = vram->iget("max_bandwidth")) {
          if (auto gbps = bandwidth_gbps(*bw)) {
            d.attributes.push_back(zl_kit::Value::f64("memory_bandwidth_peak_gbps", *gbps));
            d.attributes.push_back(zl_kit::Value::str("memory_bandwidth_source", "amd-smi static vram.max_bandwidth"));
          }
        }
      }
    }
  }
  return {};
}

zl_kit::ParseResult parse_rocm_smi_json(std::string_view text) {
  std::string error;
  auto doc = parse_json(text, '{', error);
  if (!doc) return zl_kit::ParseResult::fail(error);
  if (!doc->is_object()) return zl_kit::ParseResult::fail("expected a JSON object of cards");

  zl_kit::ParseResult result;
  for (const auto& [key, card] : doc->members()) {
    const std::string k = zl_kit::to_lower(zl_kit::trim(key));
    if (!zl_kit::starts_with(k, "card")) continue;  // "system" and the like
    auto index = zl_kit::parse_int(k.substr(4));
    if (!index || *index < 0) return zl_kit::ParseResult::fail("not a card key: " + key);
    if (!card.is_object()) return zl_kit::ParseResult::fail(key + " is not an object");

    zl_kit::Device d;
    d.index = static_cast<int32_t>(*index);
    for (const char* name_key : {"Card Series", "Device Name", "Card Model"}) {
      const std::string v = text_of(card, name_key);
      if (!missing(v)) {
        d.name = v;
        break;
      }
    }
    if (d.name.empty()) d.name = "unknown AMD GPU";

    const std::string total = text_of(card, "VRAM Total Memory (B)");
    const std::string used = text_of(card, "VRAM Total Used Memory (B)");
    const std::string total_mib = text_of(card, "VRAM Total Memory (MiB)");
    const std::string used_mib = text_of(card, "VRAM Total Used Memory (MiB)");
    auto bytes = [&](const std::string& b, const std::string& mib) -> std::optional<int64_t> {
      if (!missing(b)) {
        auto v = zl_kit::parse_int(b);
        return (v && *v >= 0) ? v : std::nullopt;
      }
      if (!missing(mib)) {
        auto v = zl_kit::parse_int(mib);
        if (v && *v >= 0) return *v * static_cast<int64_t>(kMiB);
      }
      return std::nullopt;
    };
    if (!missing(total) || !missing(total_mib)) {
      auto v = bytes(total, total_mib);
      if (!v) return zl_kit::ParseResult::fail(key + ": VRAM total is not a number");
      d.memory_total_bytes = static_cast<uint64_t>(*v);
    }
    if (!missing(used) || !missing(used_mib)) {
      auto v = bytes(used, used_mib);
      if (!v) return zl_kit::ParseResult::fail(key + ": VRAM used is not a number");
      d.memory_used_bytes = *v;
    }
    const std::string use = text_of(card, "GPU use (%)");
    if (!missing(use)) {
      auto v = zl_kit::parse_double(use);
      if (!v || *v < 0 || *v > 100) return zl_kit::ParseResult::fail(key + ": GPU use is not a percentage: " + use);
      d.utilization_percent = static_cast<int32_t>(*v + 0.5);
    }

    const std::string bus = text_of(card, "PCI Bus");
    const std::string uuid = rocr_uuid_from_unique_id(text_of(card, "Unique ID"));
    d.id = !missing(bus) ? bus : (!uuid.empty() ? uuid : "card" + std::to_string(*index));
    if (!missing(bus)) d.attributes.push_back(zl_kit::Value::str("bus_id", bus));
    d.visibility_value = !uuid.empty() ? uuid : std::to_string(*index);
    result.devices.push_back(std::move(d));
  }
  return result;
}

}  // namespace zl_rocm
