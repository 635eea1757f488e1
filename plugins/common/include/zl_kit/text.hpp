// Small text helpers for parsing vendor tool output.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zl_kit {

std::string trim(std::string_view s);
std::vector<std::string> split(std::string_view s, char sep);
std::vector<std::string> split_lines(std::string_view s);
std::string to_lower(std::string_view s);
bool iequals(std::string_view a, std::string_view b);
bool starts_with(std::string_view s, std::string_view prefix);
// Whole-string integer parse; nullopt on anything else ("N/A", "", "12x").
std::optional<int64_t> parse_int(std::string_view s);
std::optional<double> parse_double(std::string_view s);

}  // namespace zl_kit
