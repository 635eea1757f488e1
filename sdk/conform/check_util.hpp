// Checks several rules share: one line of text, an error value, a run of
// named values, two answers of enumerate.
#pragma once

#include <zl/backend.h>

#include <string>

#include "zlcore/backend.hpp"

namespace zl::conform {

// True when `s` is one line of printable UTF-8 (what zlcore prints unescaped).
bool is_text(const std::string& s);

// What is wrong with an error a backend returned ("" for nothing).
std::string error_problem(const zl_error* err);

// What is wrong with `count` named values from `first` ("" for nothing):
// struct_size, type, names and string values. `what`: "attribute", "state value".
std::string named_values_problem(const zl_named_value* first, size_t count, const std::string& what);

// The first difference between two answers of enumerate, in words ("" when
// they report the same devices, in the same order, with the same reason).
std::string device_difference(const DeviceQuery& first, const DeviceQuery& again, const std::string& again_words);

}  // namespace zl::conform
