// read_named_values (zlcore/named_value.hpp) with the reason it stopped:
// every byte is read through safe_read.hpp, so a count larger than the
// array or a name pointing nowhere gives no values and says why, instead of
// a crash. Names and string values come back as printable() text.
#pragma once

#include <string>

#include "zlcore/named_value.hpp"

namespace zl::loader {

// `problem` (may be NULL) is set to what could not be read; "" when all could.
NamedValues read_named_values_checked(const zl_named_value* first, size_t count, std::string* problem);

}  // namespace zl::loader
