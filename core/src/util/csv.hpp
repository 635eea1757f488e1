// The one CSV quoting rule zlcore writes with (ops_status.csv, kernels.csv,
// compare's CSV): RFC 4180, plus quoting a field with a space at either end,
// because common readers (pandas' skipinitialspace, spreadsheets) trim
// unquoted ones and the value would change on the way back.
#pragma once

#include <string>
#include <vector>

namespace zl::csv {

// The field as written: quoted (quotes doubled) when it holds a comma, a
// quote, a carriage return or a newline, or starts or ends with a space.
std::string field(const std::string& s);
// The fields quoted, separated by commas, ended by "\n".
std::string record(const std::vector<std::string>& fields);

}  // namespace zl::csv
