// --devices / --gpus: "all", or indices and ranges, checked against what the
// backend reports, so a typo fails before any op starts.
#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>

#include "../util/text.hpp"
#include "zlcore/batch.hpp"
#include "zlcore/errors.hpp"

namespace zl::batch {
namespace {

bool parse_index(const std::string& s, int* out) {
  if (s.empty() || s.size() > 6) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  *out = std::stoi(s);
  return true;
}

// "0-3, 5" style, so the message stays short on a 16-device host.
std::string describe(const std::vector<int>& valid) {
  if (valid.empty()) return "none";
  std::vector<int> v = valid;
  std::sort(v.begin(), v.end());
  std::ostringstream out;
  for (size_t i = 0; i < v.size();) {
    size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
    if (i > 0) out << ",";
    out << v[i];
    if (j > i) out << "-" << v[j];
    i = j + 1;
  }
  return out.str();
}

}  // namespace

std::vector<int> parse_device_list(const std::string& spec, const std::vector<int>& valid, const std::string& what) {
  const std::string valid_text = " (valid: " + describe(valid) + ")";
  std::string s = text::trim(spec, " \t");
  if (s == "all") {
    if (valid.empty()) throw UsageError(what + ": the backend reports no devices");
    return valid;
  }
  if (s.empty()) throw UsageError(what + ": empty device list" + valid_text);
  const std::set<int> known(valid.begin(), valid.end());
  std::vector<int> out;
  std::set<int> seen;
  std::stringstream in(s);
  std::string token;
  while (std::getline(in, token, ',')) {
    token = text::trim(token, " \t");
    int lo = 0, hi = 0;
    size_t dash = token.find('-');
    bool ok = dash == std::string::npos ? parse_index(token, &lo) && parse_index(token, &hi)
                                        : parse_index(text::trim(token.substr(0, dash), " \t"), &lo) &&
                                              parse_index(text::trim(token.substr(dash + 1), " \t"), &hi);
    if (!ok || lo > hi) throw UsageError(what + ": '" + token + "' is not an index or a range like 0-3" + valid_text);
    for (int i = lo; i <= hi; ++i) {
      if (!known.count(i)) throw UsageError(what + ": device " + std::to_string(i) + " does not exist" + valid_text);
      if (!seen.insert(i).second)
        throw UsageError(what + ": device " + std::to_string(i) + " is listed twice" + valid_text);
      out.push_back(i);
    }
  }
  return out;
}

}  // namespace zl::batch
