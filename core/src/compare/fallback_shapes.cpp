// timer.fallback_shapes as a caliber: which (dtype, shape, side) fell back to
// the fallback timer and why, as a set. Listing the records themselves made
// one table cell of ten near-identical lines that differed only in a call
// count; a count per reason says the same in one line.
#include <map>
#include <regex>
#include <set>

#include "zlcore/compare.hpp"

namespace zl::compare {

std::string normalized_reason(const std::string& reason) {
  static const std::regex number("0x[0-9a-fA-F]+|[0-9]+(\\.[0-9]+)?");
  return std::regex_replace(reason, number, "N");
}

std::string fallback_summary(const std::set<FallbackShape>& shapes) {
  if (shapes.empty()) return "(none)";
  std::set<std::pair<std::string, std::string>> distinct;  // (dtype, shape): both sides count once
  std::map<std::string, int> by_reason;
  for (const FallbackShape& f : shapes) {
    distinct.insert({f.dtype, f.shape});
    by_reason[f.reason.empty() ? "reason not recorded" : f.reason]++;
  }
  std::string out = std::to_string(distinct.size()) + (distinct.size() == 1 ? " shape" : " shapes") + " fell back: ";
  bool first = true;
  for (const auto& [reason, n] : by_reason) {
    out += (first ? "" : "; ") + reason + " (" + std::to_string(n) + ")";
    first = false;
  }
  return out;
}

}  // namespace zl::compare
