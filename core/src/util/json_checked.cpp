#include "json_checked.hpp"

#include <stdexcept>

namespace zl::json {

const rapidjson::Value& member(const rapidjson::Value& obj, const char* name) {
  if (!obj.IsObject()) throw std::runtime_error(std::string("not an object where '") + name + "' was expected");
  const auto it = obj.FindMember(name);
  if (it == obj.MemberEnd()) throw std::runtime_error(std::string("'") + name + "' is missing");
  return it->value;
}

std::string string_at(const rapidjson::Value& obj, const char* name) {
  const rapidjson::Value& v = member(obj, name);
  if (!v.IsString()) throw std::runtime_error(std::string("'") + name + "' is not a string");
  return {v.GetString(), v.GetStringLength()};
}

double number_at(const rapidjson::Value& obj, const char* name) {
  const rapidjson::Value& v = member(obj, name);
  if (!v.IsNumber()) throw std::runtime_error(std::string("'") + name + "' is not a number");
  return v.GetDouble();
}

int int_at(const rapidjson::Value& obj, const char* name) {
  const rapidjson::Value& v = member(obj, name);
  if (!v.IsInt()) throw std::runtime_error(std::string("'") + name + "' is not an integer");
  return v.GetInt();
}

const rapidjson::Value& array_at(const rapidjson::Value& obj, const char* name) {
  const rapidjson::Value& v = member(obj, name);
  if (!v.IsArray()) throw std::runtime_error(std::string("'") + name + "' is not an array");
  return v;
}

std::vector<std::string> strings(const rapidjson::Value& array, const char* what) {
  if (!array.IsArray()) throw std::runtime_error(std::string(what) + " is not an array");
  std::vector<std::string> out;
  for (const auto& s : array.GetArray()) {
    if (!s.IsString()) throw std::runtime_error(std::string(what) + " holds a value that is not a string");
    out.emplace_back(s.GetString(), s.GetStringLength());
  }
  return out;
}

}  // namespace zl::json
