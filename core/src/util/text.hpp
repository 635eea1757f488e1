// Small text helpers shared by the core's messages and reports.
#pragma once

#include <string>
#include <vector>

namespace zl::text {

// `s` on one line: newlines, carriage returns and tabs become spaces; longer
// than `limit`, it ends in "...".
std::string one_line(std::string s, size_t limit = std::string::npos);
// The items separated by `sep`.
std::string join(const std::vector<std::string>& items, const std::string& sep = ", ");
// The first `max_items` items separated by `sep`, then "and N more".
std::string join_some(const std::vector<std::string>& items, size_t max_items, const std::string& sep = "; ");

}  // namespace zl::text
