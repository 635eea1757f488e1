#include "kernels.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "../util/printable.hpp"

namespace zl::compare {
namespace {

std::string us_text(const std::optional<double>& v) {
  if (!v) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", *v);
  return buf;
}

}  // namespace

std::vector<KernelTime> kernels_at(const rapidjson::Value& row) {
  std::vector<KernelTime> out;
  auto it = row.FindMember("kernels");
  if (it == row.MemberEnd() || !it->value.IsArray()) return out;
  for (const auto& k : it->value.GetArray()) {
    if (!k.IsObject()) continue;
    auto name = k.FindMember("name");
    auto us = k.FindMember("us");
    if (name == k.MemberEnd() || !name->value.IsString() || us == k.MemberEnd() || !us->value.IsNumber()) continue;
    const double v = us->value.GetDouble();
    if (!std::isfinite(v) || v < 0) continue;
    out.push_back({printable(name->value.GetString()), v});
  }
  return out;
}

std::vector<KernelMove> kernels_moved(const std::vector<KernelTime>& a, const std::vector<KernelTime>& b, size_t top) {
  // One side unprofiled (or its pass failed): nothing to say what moved.
  if (a.empty() || b.empty()) return {};
  std::map<std::string, KernelMove> by_name;
  for (const KernelTime& k : a) by_name[k.name].a_us = k.us;
  for (const KernelTime& k : b) by_name[k.name].b_us = k.us;
  std::vector<std::pair<double, KernelMove>> moved;
  for (auto& [name, m] : by_name) {
    m.name = name;
    const double move = std::fabs(m.b_us.value_or(0) - m.a_us.value_or(0));
    if (move > 0) moved.emplace_back(move, m);
  }
  // The largest move first; a tie in the order of the names (the map's).
  std::stable_sort(moved.begin(), moved.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
  std::vector<KernelMove> out;
  for (size_t i = 0; i < moved.size() && i < top; ++i) out.push_back(moved[i].second);
  return out;
}

std::string kernel_change(const KernelMove& m) {
  if (!m.a_us || *m.a_us <= 0) return "new";
  if (!m.b_us) return "gone";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f %%", (*m.b_us / *m.a_us - 1.0) * 100);
  return buf;
}

std::vector<std::vector<std::string>> kernel_lines(const Report& r) {
  std::vector<std::vector<std::string>> out;
  for (const Compared& c : r.rows) {
    if (c.verdict != Verdict::Slower && c.verdict != Verdict::Faster) continue;
    for (const KernelMove& m : c.kernels_moved) {
      out.push_back({c.op, c.dtype, c.shape, verdict_name(c.verdict), m.name, us_text(m.a_us), us_text(m.b_us),
                     kernel_change(m)});
    }
  }
  return out;
}

}  // namespace zl::compare
