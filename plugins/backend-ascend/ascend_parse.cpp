#include "ascend_parse.hpp"

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>

#include "zl_kit/text.hpp"

namespace zl_ascend {
namespace {

constexpr uint64_t kMiB = 1024ull * 1024ull;

// Splits on runs of two or more spaces (or tabs): npu-smi pads its columns,
// while a chip name such as "Ascend 910B3" holds single spaces.
std::vector<std::string> columns(std::string_view line) {
  std::vector<std::string> out;
  std::string cur;
  size_t spaces = 0;
  for (char c : line) {
    if (c == ' ' || c == '\t') {
      ++spaces;
      if (c == '\t') spaces = 2;
      continue;
    }
    if (spaces >= 2 && !cur.empty()) {
      out.push_back(cur);
      cur.clear();
    } else if (spaces == 1 && !cur.empty()) {
      cur += ' ';
    }
    spaces = 0;
    cur += c;
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

// Whitespace- and '/'-separated tokens of one table cell.
std::vector<std::string> tokens(std::string_view cell) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : cell) {
    if (c == ' ' || c == '\t' || c == '/') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

bool health_word(const std::string& s) {
  static const std::set<std::string> words = {"ok", "warning", "alarm", "critical", "unknown", "poweroff"};
  return words.count(zl_kit::to_lower(s)) > 0;
}

}  // namespace

zl_kit::ParseResult parse_npu_smi_map(std::string_view text) {
  std::vector<ChipKey> keys;
  return parse_npu_smi_map(text, keys);
}

zl_kit::ParseResult parse_npu_smi_map(std::string_view text, std::vector<ChipKey>& keys) {
  keys.clear();
  int npu_col = -1, chip_col = -1, logic_col = -1, name_col = -1;
  zl_kit::ParseResult result;
  std::set<int64_t> logic_seen;
  for (const std::string& raw : zl_kit::split_lines(text)) {
    std::vector<std::string> cols = columns(raw);
    if (cols.empty()) continue;
    if (npu_col < 0) {
      for (size_t i = 0; i < cols.size(); ++i) {
        const std::string c = zl_kit::to_lower(cols[i]);
        if (c == "npu id")
          npu_col = static_cast<int>(i);
        else if (c == "chip id")
          chip_col = static_cast<int>(i);
        else if (c == "chip logic id")
          logic_col = static_cast<int>(i);
        else if (c == "chip name")
          name_col = static_cast<int>(i);
      }
      if (npu_col < 0 || chip_col < 0 || logic_col < 0) {
        return zl_kit::ParseResult::fail("no \"NPU ID  Chip ID  Chip Logic ID\" header");
      }
      continue;
    }
    const int need = std::max({npu_col, chip_col, logic_col});
    if (static_cast<int>(cols.size()) <= need) {
      return zl_kit::ParseResult::fail("short row: " + zl_kit::trim(raw));
    }
    const std::string name = name_col >= 0 && name_col < static_cast<int>(cols.size()) ? cols[name_col] : "";
    auto npu = zl_kit::parse_int(cols[npu_col]);
    auto chip = zl_kit::parse_int(cols[chip_col]);
    if (!npu || !chip) return zl_kit::ParseResult::fail("row without NPU and chip ids: " + zl_kit::trim(raw));
    // Management controllers have no logic id and run no kernels.
    if (zl_kit::iequals(name, "Mcu") || cols[logic_col] == "-") continue;
    auto logic = zl_kit::parse_int(cols[logic_col]);
    if (!logic || *logic < 0) return zl_kit::ParseResult::fail("chip logic id is not a number: " + cols[logic_col]);
    if (!logic_seen.insert(*logic).second) {
      return zl_kit::ParseResult::fail("chip logic id " + cols[logic_col] + " listed twice");
    }
    zl_kit::Device d;
    d.index = static_cast<int32_t>(*logic);
    d.id = "npu" + std::to_string(*npu) + "-chip" + std::to_string(*chip);
    d.name = name.empty() ? "unknown Ascend NPU" : name;
    d.visibility_value = std::to_string(*logic);
    result.devices.push_back(std::move(d));
    keys.emplace_back(*npu, *chip);
  }
  if (npu_col < 0) return zl_kit::ParseResult::fail("empty output");
  return result;
}

std::string parse_npu_smi_info(std::string_view text, std::map<ChipKey, ChipStatus>& out) {
  bool header = false;
  bool hbm = false;
  std::optional<int64_t> npu;   // set by a chip's first row, used by its second
  std::optional<double> power;  // the NPU row's readings, for each of its chips
  std::optional<int64_t> temperature;
  std::string name;
  std::string driver;
  for (const std::string& raw : zl_kit::split_lines(text)) {
    const std::string line = zl_kit::trim(raw);
    if (line.empty() || line.front() != '|') {
      if (!line.empty() && line.front() == '+') continue;
      continue;
    }
    if (line.find("Process id") != std::string::npos || line.find("Process ID") != std::string::npos) break;
    std::vector<std::string> cells = zl_kit::split(line.substr(1, line.size() - (line.back() == '|' ? 2 : 1)), '|');
    for (std::string& c : cells) c = zl_kit::trim(c);
    if (!header && cells.size() == 1) {
      // "| npu-smi 23.0.6    Version: 23.0.6 |": above the table, once.
      const size_t at = cells[0].find("Version:");
      if (at != std::string::npos) driver = zl_kit::trim(cells[0].substr(at + 8));
      continue;
    }
    if (cells.size() < 3) continue;
    if (zl_kit::starts_with(cells[0], "NPU") && cells[1].find("Health") != std::string::npos) {
      header = true;
      continue;
    }
    if (zl_kit::starts_with(cells[0], "Chip") && cells[1].find("Bus-Id") != std::string::npos) {
      hbm = cells[2].find("HBM-Usage") != std::string::npos;
      continue;
    }
    if (!header) continue;
    std::vector<std::string> first = tokens(cells[0]);
    if (first.empty()) continue;
    if (health_word(cells[1])) {
      // "| 0     910B3 | OK | 93.6  37  0 / 0 |": NPU id and chip name.
      npu = zl_kit::parse_int(first[0]);
      if (!npu) return "NPU id is not a number: " + cells[0];
      name = first.size() > 1 ? zl_kit::trim(cells[0].substr(cells[0].find(first[1]))) : "";
      // "93.6  37  0 / 0": Power(W), Temp(C), Hugepages; readings, so optional.
      std::vector<std::string> readings = tokens(cells[2]);
      power = readings.size() >= 2 ? zl_kit::parse_double(readings[0]) : std::nullopt;
      temperature = readings.size() >= 2 ? zl_kit::parse_int(readings[1]) : std::nullopt;
      continue;
    }
    // "| 0  [Device] | 0000:C1:00.0 | 0  0 / 0  3396 / 65536 |": the chip.
    if (!npu) return "chip row before its NPU row: " + line;
    auto chip = zl_kit::parse_int(first[0]);
    if (!chip) return "chip id is not a number: " + cells[0];
    ChipStatus s;
    s.name = name;
    s.driver_version = driver;
    if (power) s.power_w = *power;
    if (temperature) s.temperature_c = *temperature;
    s.bus_id = cells[1];
    std::vector<std::string> t = tokens(cells[2]);
    if (t.size() < 3) return "usage cell not understood: " + cells[2];
    if (auto ai = zl_kit::parse_double(t[0]); ai && *ai >= 0 && *ai <= 100)
      s.aicore_percent = static_cast<int32_t>(*ai + 0.5);
    std::vector<int64_t> numbers;
    for (size_t i = 1; i < t.size(); ++i) {
      auto v = zl_kit::parse_int(t[i]);
      if (!v) return "usage cell not understood: " + cells[2];
      numbers.push_back(*v);
    }
    // Memory-Usage(MB) pair, then HBM-Usage(MB) on chips that have HBM. The
    // HBM pair is the device memory kernels use; DDR reads 0 / 0 there.
    if (hbm && numbers.size() >= 4) {
      s.memory_used_mb = numbers[2];
      s.memory_total_mb = numbers[3];
    } else if (numbers.size() >= 2) {
      s.memory_used_mb = numbers[0];
      s.memory_total_mb = numbers[1];
    }
    out[{*npu, *chip}] = s;
  }
  if (!header) return "no \"NPU  Name | Health\" table header";
  return {};
}

void merge_npu_smi_info(const std::map<ChipKey, ChipStatus>& status, std::vector<zl_kit::Device>& devices,
                        const std::vector<ChipKey>& keys) {
  for (size_t i = 0; i < devices.size() && i < keys.size(); ++i) {
    auto it = status.find(keys[i]);
    if (it == status.end()) continue;
    const ChipStatus& s = it->second;
    zl_kit::Device& d = devices[i];
    // The PCI address is the stable identity across driver reloads.
    if (!s.bus_id.empty() && s.bus_id != "NA") d.id = s.bus_id + "/chip" + std::to_string(keys[i].second);
    if (s.memory_total_mb > 0) d.memory_total_bytes = static_cast<uint64_t>(s.memory_total_mb) * kMiB;
    if (s.memory_total_mb > 0 && s.memory_used_mb >= 0)
      d.memory_used_bytes = s.memory_used_mb * static_cast<int64_t>(kMiB);
    d.utilization_percent = s.aicore_percent;
    if (!s.bus_id.empty() && s.bus_id != "NA") d.attributes.push_back(zl_kit::Value::str("bus_id", s.bus_id));
    if (!s.driver_version.empty()) d.attributes.push_back(zl_kit::Value::str("driver_version", s.driver_version));
    if (s.power_w >= 0) d.state.push_back(zl_kit::Value::f64("power_draw_w", s.power_w));
    if (s.temperature_c >= 0) d.state.push_back(zl_kit::Value::i64("temperature_c", s.temperature_c));
  }
}

}  // namespace zl_ascend
