// Checked access to a parsed JSON document (parse it with json_read.hpp):
// the member `name` of the object `obj` with the type asked for, else
// std::runtime_error saying which member and what it should have been
// ("'shards' is missing", "'ops' is not an array"), instead of RapidJSON's
// assertion or undefined behaviour on a wrong type.
#pragma once

#include <rapidjson/document.h>

#include <string>
#include <vector>

namespace zl::json {

const rapidjson::Value& member(const rapidjson::Value& obj, const char* name);
std::string string_at(const rapidjson::Value& obj, const char* name);
double number_at(const rapidjson::Value& obj, const char* name);
int int_at(const rapidjson::Value& obj, const char* name);
const rapidjson::Value& array_at(const rapidjson::Value& obj, const char* name);
// Every element of an array of strings; throws when one is not a string.
std::vector<std::string> strings(const rapidjson::Value& array, const char* what);

}  // namespace zl::json
