// Reading one CSV record of a file zlcore appends to (ops_status.csv,
// rounds.csv) the way its readers need after a person or a full disk had it:
// quotes are special only at the start of a field (as Python's csv reads
// them), so a stray quote inside a field is text; a quoted field may hold
// line ends. Only '\n' ends a record ('\r' before it is dropped).
#pragma once

#include <string>
#include <vector>

namespace zl::csv {

struct Scanned {
  std::vector<std::string> fields;
  size_t end = 0;             // just after the record's '\n' (or the text's end)
  size_t first_line_end = 0;  // just after the first physical line
  bool complete = false;      // ended by a '\n' outside quotes
  bool multiline = false;     // a quoted field held a '\n'
};

// The record that starts at `pos` of `t`.
Scanned scan_record(const std::string& t, size_t pos);

}  // namespace zl::csv
