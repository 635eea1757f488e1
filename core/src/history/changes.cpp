#include "changes.hpp"

#include <sstream>

namespace zl::history {
namespace {

std::map<std::string, std::string> segment_map(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const size_t eq = line.find('=');
    if (eq != std::string::npos) out[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return out;
}

std::string shown(const std::string& v) { return v.empty() ? "(none)" : v; }

}  // namespace

std::vector<Change> changed_keys(const std::map<std::string, std::string>& before,
                                 const std::map<std::string, std::string>& after) {
  std::map<std::string, std::pair<std::string, std::string>> both;
  for (const auto& [k, v] : before) both[k].first = v;
  for (const auto& [k, v] : after) both[k].second = v;
  std::vector<Change> out;
  for (const auto& [k, v] : both)
    if (v.first != v.second) out.push_back({k, shown(v.first), shown(v.second)});
  return out;
}

std::string segment_difference(const std::string& from, const std::string& to) {
  std::string out;
  for (const Change& c : changed_keys(segment_map(from), segment_map(to)))
    out += (out.empty() ? "" : "; ") + c.key + ": " + c.before + " -> " + c.after;
  return out;
}

std::vector<std::string> segment_notes(const Report& r) {
  std::map<std::pair<size_t, std::string>, size_t> count;
  for (const ReportSeries& s : r.series)
    for (const SegmentBreak& b : s.result.breaks) ++count[{b.first_run, segment_difference(b.from, b.to)}];
  std::vector<std::string> out;
  for (const auto& [at, n] : count) {
    out.push_back("run " + std::to_string(at.first + 1) + " (" + r.runs[at.first].path + ") starts a new segment for " +
                  std::to_string(n) + " series (" + at.second +
                  "): measured another way, so no step is read across it");
  }
  return out;
}

}  // namespace zl::history
