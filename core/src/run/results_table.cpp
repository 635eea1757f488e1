#include "results_table.hpp"

#include <rapidjson/document.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <vector>

#include "../util/json_read.hpp"

namespace zl {
namespace {

std::string field(const rapidjson::Value& row, const char* key) {
  auto it = row.FindMember(key);
  if (it == row.MemberEnd() || it->value.IsNull()) return "-";
  const rapidjson::Value& v = it->value;
  char buf[64];
  if (v.IsString()) return v.GetString();
  if (v.IsInt64()) return std::to_string(v.GetInt64());
  if (v.IsNumber()) {
    double d = v.GetDouble();
    std::snprintf(buf, sizeof buf, d != 0 && (d < 0.01 && d > -0.01) ? "%.6f" : "%.4f", d);
    return buf;
  }
  if (v.IsBool()) return v.GetBool() ? "yes" : "no";
  return "?";
}

// "4213 (86%)": an achieved figure and its share of the device's peak, or
// "-" where the row has neither.
std::string achieved(const rapidjson::Value& row, const char* value_key, const char* pct_key) {
  auto number = [&](const char* key) -> const rapidjson::Value* {
    auto it = row.FindMember(key);
    return it != row.MemberEnd() && it->value.IsNumber() ? &it->value : nullptr;
  };
  const rapidjson::Value* v = number(value_key);
  if (v == nullptr) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, v->GetDouble() >= 100 ? "%.0f" : "%.3g", v->GetDouble());
  std::string out = buf;
  if (const rapidjson::Value* pct = number(pct_key)) {
    std::snprintf(buf, sizeof buf, " (%.0f%%)", pct->GetDouble());
    out += buf;
  }
  return out;
}

}  // namespace

std::string format_results_table(const std::string& results_jsonl) {
  std::ifstream in(results_jsonl);
  std::vector<std::vector<std::string>> rows;
  const std::vector<std::string> head{"op",    "dtype",    "shape",         "torch ms",        "gems ms", "speedup",
                                      "timer", "spread %", "GB/s (% peak)", "TFLOPS (% peak)", "note"};
  // A line that does not parse is skipped, and the first one is named under
  // the table: the child appends lines, so a torn last line is expected after
  // a crash, and anything else is someone else's file.
  int lineno = 0, unreadable = 0;
  std::string first_unreadable;
  for (std::string line; std::getline(in, line);) {
    ++lineno;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    rapidjson::Document d;
    const std::string why = json::parse(d, line);
    if (!why.empty() || !d.IsObject()) {
      if (unreadable++ == 0) {
        first_unreadable = results_jsonl + ":" + std::to_string(lineno) + ": " + (why.empty() ? "not an object" : why);
      }
      continue;
    }
    std::string note = field(d, "error");
    if (note == "-") note = field(d, "fallback_reason");
    if (note != "-" && note.size() > 60) note = note.substr(0, 57) + "...";
    rows.push_back({field(d, "op"), field(d, "dtype"), field(d, "shape"), field(d, "latency_base_ms"),
                    field(d, "latency_ms"), field(d, "speedup"), field(d, "timer"), field(d, "spread_pct"),
                    achieved(d, "achieved_gbps", "pct_peak_bandwidth"),
                    achieved(d, "achieved_tflops", "pct_peak_compute"), note});
  }
  std::string skipped;
  if (unreadable > 0) {
    skipped = std::to_string(unreadable) + " unreadable line(s) skipped, the first: " + first_unreadable + "\n";
  }
  if (rows.empty()) return "no results recorded\n" + skipped;
  std::vector<size_t> width(head.size());
  for (size_t c = 0; c < head.size(); ++c) {
    width[c] = head[c].size();
    for (const auto& r : rows) width[c] = std::max(width[c], std::min<size_t>(r[c].size(), 60));
  }
  auto line = [&](const std::vector<std::string>& r) {
    std::string out;
    for (size_t c = 0; c < r.size(); ++c) {
      std::string cell = r[c].size() > 60 ? r[c].substr(0, 57) + "..." : r[c];
      out += cell + std::string(width[c] - cell.size() + 2, ' ');
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = line(head);
  for (const auto& r : rows) out += line(r);
  return out + skipped;
}

}  // namespace zl
