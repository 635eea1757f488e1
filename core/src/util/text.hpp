// Small text helpers shared by the core's messages, lists and reports: the
// one copy of each (a private copy elsewhere is a bug waiting to disagree).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace zl::text {

inline constexpr std::string_view kSpace = " \t\r\n";

// `s` on one line: newlines, carriage returns and tabs become spaces; longer
// than `limit`, it ends in "...".
std::string one_line(std::string s, size_t limit = std::string::npos);
// The items separated by `sep`.
std::string join(const std::vector<std::string>& items, const std::string& sep = ", ");
// The first `max_items` items separated by `sep`, then "and N more".
std::string join_some(const std::vector<std::string>& items, size_t max_items, const std::string& sep = "; ");
// `s` without the characters of `chars` at either end (trim) or at its end.
std::string trim(std::string_view s, std::string_view chars = kSpace);
std::string trim_end(std::string_view s, std::string_view chars = kSpace);
// The pieces of `s` between any of the `separators`, each trimmed of
// `trim_chars` (none by default). Empty pieces are dropped: in every list
// zlcore reads (ops, dtypes, devices, search paths) an empty item means
// nothing, and "a,,b" or a trailing comma is a slip, not a request.
std::vector<std::string> split(std::string_view s, std::string_view separators, std::string_view trim_chars = {});
// The pieces of `s` between any of the `separators`, empty ones kept: for a
// list where an empty item is an error to report, not a slip to drop.
// "" is one empty piece.
std::vector<std::string> split_keep_empty(std::string_view s, std::string_view separators);

// The fewest single-character insertions, deletions and substitutions that
// turn `a` into `b` (Levenshtein).
size_t edit_distance(std::string_view a, std::string_view b);
// The candidates nearest to a mistyped `given`, for a "did you mean": those
// that start with it or that it starts with (a prefix or a plural), else those
// within `max_distance` edits; the nearest first, ties in the candidates' order.
std::vector<std::string> nearest(const std::string& given, const std::vector<std::string>& candidates,
                                 size_t max_distance = 2);

}  // namespace zl::text
