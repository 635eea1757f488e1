// A report's provenance block: where and with what each side was measured
// (backend, device, driver, versions and commits, dates, the command), so a
// report forwarded without its run directories still says what it is about.
// Only what the runs recorded: a fact no run of a side recorded reads
// "unknown", never a guess.
#pragma once

#include <rapidjson/document.h>

#include <map>
#include <string>
#include <vector>

#include "zlcore/compare.hpp"

namespace zl::compare::provenance {

// The facts one run_identity.json records, for RunInfo::provenance.
std::map<std::string, std::string> read(const rapidjson::Value& identity);

struct Line {
  std::string what;  // "device", "FlagGems", ...
  std::string a, b;  // each side's value over its runs; "unknown" where none recorded it
  bool same() const { return a == b; }
};
// One line per fact, in the order a reader looks for them.
std::vector<Line> lines(const Report& r);

}  // namespace zl::compare::provenance
