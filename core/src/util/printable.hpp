// Text from users, suites and children on its way to a terminal: an op name,
// a test id or a reason can carry escape sequences that would recolour,
// retitle or rewrite the terminal. Every control character (and every byte
// that is not UTF-8) is shown as an escape instead; the rest of the text,
// UTF-8 included, passes unchanged.
#pragma once

#include <string>

namespace zl {

// "\x1b[31m" -> "\\x1b[31m", "\n" -> "\\n", "\t" -> "\\t"; C1 controls
// (U+0080..U+009F) -> "\\u0085"; a byte that is not UTF-8 -> "\\xff".
std::string printable(const std::string& text);
// The same for text of several lines: each line escaped, its '\n' kept.
std::string printable_lines(const std::string& text);

}  // namespace zl
