#include "musa_parse.hpp"

#include <cctype>
#include <map>
#include <set>

#include "zl_kit/json.hpp"
#include "zl_kit/text.hpp"

namespace zl_musa {
namespace {

// "38C", "92.75W", "1500MHz": the number a reading starts with.
std::optional<double> leading_number(const std::string& text) {
  const std::string t = zl_kit::trim(text);
  size_t end = 0;
  while (end < t.size() && (std::isdigit(static_cast<unsigned char>(t[end])) || t[end] == '.')) ++end;
  return end == 0 ? std::nullopt : zl_kit::parse_double(t.substr(0, end));
}

constexpr uint64_t kMiB = 1024ull * 1024ull;

bool missing(const std::string& v) { return v.empty() || zl_kit::iequals(v, "N/A"); }

// "49152MiB", "49152 MiB", "48GiB", "1024 KiB" -> bytes.
std::optional<uint64_t> memory_bytes(const std::string& v) {
  std::string t = zl_kit::trim(v);
  size_t i = 0;
  while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) ++i;
  auto n = zl_kit::parse_int(t.substr(0, i));
  if (!n) return std::nullopt;
  const std::string unit = zl_kit::to_lower(zl_kit::trim(t.substr(i)));
  uint64_t scale = 0;
  if (unit == "mib" || unit == "mb" || unit.empty())
    scale = kMiB;
  else if (unit == "gib" || unit == "gb")
    scale = kMiB * 1024;
  else if (unit == "kib" || unit == "kb")
    scale = 1024;
  else if (unit == "b")
    scale = 1;
  else
    return std::nullopt;
  return static_cast<uint64_t>(*n) * scale;
}

// "37%", "37 %", "37" -> 37.
std::optional<int32_t> percent(const std::string& v) {
  std::string t = zl_kit::trim(v);
  if (!t.empty() && t.back() == '%') t = zl_kit::trim(t.substr(0, t.size() - 1));
  auto n = zl_kit::parse_double(t);
  if (!n || *n < 0 || *n > 100) return std::nullopt;
  return static_cast<int32_t>(*n + 0.5);
}

// The fields of one GPU under their section paths: "Product Name",
// "FB Memory Usage/Total", ... Keys are compared in lower case.
using Fields = std::map<std::string, std::string>;

std::string field(const Fields& f, const std::string& path) {
  auto it = f.find(zl_kit::to_lower(path));
  return it == f.end() ? std::string() : it->second;
}

zl_kit::ParseResult build(const std::vector<Fields>& gpus) {
  zl_kit::ParseResult result;
  std::set<int64_t> seen;
  int position = 0;
  for (const Fields& f : gpus) {
    const std::string where = "GPU #" + std::to_string(position++) + ": ";
    zl_kit::Device d;
    std::string idx = field(f, "Index");
    if (missing(idx)) idx = field(f, "Minor Number");
    auto index = missing(idx) ? std::optional<int64_t>(position - 1) : zl_kit::parse_int(idx);
    if (!index || *index < 0) return zl_kit::ParseResult::fail(where + "index is not a number: " + idx);
    if (!seen.insert(*index).second) return zl_kit::ParseResult::fail(where + "index " + idx + " listed twice");
    d.index = static_cast<int32_t>(*index);

    std::string name = field(f, "Product Name");
    d.name = missing(name) ? "unknown Moore Threads GPU" : name;
    std::string uuid = field(f, "GPU UUID");
    if (missing(uuid)) uuid = field(f, "UUID");
    std::string bus = field(f, "PCI/Bus Id");
    if (missing(bus)) bus = field(f, "Bus Id");
    if (missing(bus)) bus = field(f, "@bus");
    d.id = !missing(uuid) ? uuid : (!missing(bus) ? bus : "musa" + std::to_string(*index));

    const std::string total = field(f, "FB Memory Usage/Total");
    if (!missing(total)) {
      auto v = memory_bytes(total);
      if (!v) return zl_kit::ParseResult::fail(where + "memory total not understood: " + total);
      d.memory_total_bytes = *v;
    }
    const std::string used = field(f, "FB Memory Usage/Used");
    if (!missing(used)) {
      auto v = memory_bytes(used);
      if (!v) return zl_kit::ParseResult::fail(where + "memory used not understood: " + used);
      d.memory_used_bytes = static_cast<int64_t>(*v);
    }
    const std::string util = field(f, "Utilization/Gpu");
    if (!missing(util)) {
      auto v = percent(util);
      if (!v) return zl_kit::ParseResult::fail(where + "utilization not understood: " + util);
      d.utilization_percent = *v;
    }
    d.visibility_value = std::to_string(*index);
    // Attributes and readings are extras: a value in an unknown form is left out.
    const std::string arch = field(f, "Product Architecture");
    if (!missing(arch)) d.attributes.push_back(zl_kit::Value::str("architecture", zl_kit::to_lower(arch)));
    if (!missing(bus)) d.attributes.push_back(zl_kit::Value::str("bus_id", bus));
    const std::string driver = field(f, "Driver Version");
    if (!missing(driver)) d.attributes.push_back(zl_kit::Value::str("driver_version", driver));
    if (auto t = leading_number(field(f, "Temperature/GPU Current Temp"))) {
      d.state.push_back(zl_kit::Value::i64("temperature_c", static_cast<int64_t>(*t)));
    }
    std::string draw = field(f, "Power Readings/Power Draw");
    if (missing(draw)) draw = field(f, "Power Readings/Power Draw ");
    if (auto w = leading_number(draw)) d.state.push_back(zl_kit::Value::f64("power_draw_w", *w));
    result.devices.push_back(std::move(d));
  }
  return result;
}

void flatten(const zl_kit::Json& obj, const std::string& prefix, Fields& out) {
  for (const auto& [key, value] : obj.members()) {
    const std::string path = prefix + zl_kit::to_lower(zl_kit::trim(key));
    if (value.is_object())
      flatten(value, path + "/", out);
    else
      out[path] = zl_kit::trim(value.scalar_text());
  }
}

}  // namespace

zl_kit::ParseResult parse_gmi_json(std::string_view text) {
  size_t at = text.find('{');
  if (at == std::string_view::npos) return zl_kit::ParseResult::fail("no JSON object in the output");
  std::string error;
  auto doc = zl_kit::Json::parse(text.substr(at), &error);
  if (!doc) return zl_kit::ParseResult::fail(error);
  const zl_kit::Json* gpu = doc->iget("GPU");
  if (gpu == nullptr) return zl_kit::ParseResult::fail("no \"GPU\" entry");
  std::vector<Fields> gpus;
  auto add = [&](const zl_kit::Json& g) {
    Fields f;
    flatten(g, "", f);
    gpus.push_back(std::move(f));
  };
  if (gpu->is_array()) {
    for (const zl_kit::Json& g : gpu->items()) {
      if (!g.is_object()) return zl_kit::ParseResult::fail("a \"GPU\" entry is not an object");
      add(g);
    }
  } else if (gpu->is_object()) {
    add(*gpu);  // one GPU may be printed as an object rather than a list
  } else {
    return zl_kit::ParseResult::fail("\"GPU\" is neither a list nor an object");
  }
  // The driver is reported once for the host, not per GPU.
  if (const zl_kit::Json* driver = doc->iget("Driver Version")) {
    const std::string version = zl_kit::trim(driver->scalar_text());
    if (!missing(version)) {
      for (Fields& f : gpus) f.emplace("driver version", version);
    }
  }
  return build(gpus);
}

zl_kit::ParseResult parse_gmi_query_text(std::string_view text) {
  std::vector<Fields> gpus;
  // Section headers ("FB Memory Usage") with the indentation they sit at.
  std::vector<std::pair<size_t, std::string>> sections;
  for (const std::string& raw : zl_kit::split_lines(text)) {
    const std::string line = zl_kit::trim(raw);
    if (line.empty() || line.find_first_not_of('=') == std::string::npos) continue;
    size_t indent = raw.find_first_not_of(" \t");
    if (indent == 0 && zl_kit::starts_with(line, "GPU") && line.find(':') != std::string::npos &&
        line.find(" : ") == std::string::npos) {
      // "GPU 00000000:3B:00.0" opens one GPU's block.
      gpus.emplace_back();
      gpus.back()["@bus"] = zl_kit::trim(line.substr(3));
      sections.clear();
      continue;
    }
    if (gpus.empty()) continue;  // header lines: timestamp, driver version
    while (!sections.empty() && sections.back().first >= indent) sections.pop_back();
    size_t colon = line.find(" : ");
    std::string key = zl_kit::to_lower(zl_kit::trim(colon == std::string::npos ? line : line.substr(0, colon)));
    if (!key.empty() && key.back() == ':') key = zl_kit::trim(key.substr(0, key.size() - 1));
    std::string path;
    for (const auto& s : sections) path += s.second + "/";
    if (colon == std::string::npos) {
      sections.emplace_back(indent, key);
      continue;
    }
    gpus.back()[path + key] = zl_kit::trim(line.substr(colon + 3));
  }
  if (gpus.empty()) return zl_kit::ParseResult::fail("no \"GPU <bus id>\" block in the output");
  return build(gpus);
}

}  // namespace zl_musa
