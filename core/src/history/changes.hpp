// What differs between two runs' identities, and where series start new segments.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "zlcore/history.hpp"

namespace zl::history {

// The keys whose values differ (absent on one side reads "(none)"), sorted.
std::vector<Change> changed_keys(const std::map<std::string, std::string>& before,
                                 const std::map<std::string, std::string>& after);

// The segment keys that differ between two segment texts, as "key: a -> b".
std::string segment_difference(const std::string& from, const std::string& to);

// One line per (run, difference): how many series start a new segment there.
std::vector<std::string> segment_notes(const Report& r);

}  // namespace zl::history
