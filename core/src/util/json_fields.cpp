#include "json_fields.hpp"

#include <stdexcept>

namespace zl::json {
namespace {

std::vector<std::string> string_array(const rapidjson::Value& v, const std::string& name) {
  if (!v.IsArray()) throw std::runtime_error("'" + name + "' is not an array");
  std::vector<std::string> out;
  for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
    if (!v[i].IsString()) throw std::runtime_error("'" + name + "[" + std::to_string(i) + "]' is not a string");
    out.emplace_back(v[i].GetString(), v[i].GetStringLength());
  }
  return out;
}

}  // namespace

Fields::Fields(const rapidjson::Value& obj, std::string path) : obj_(&obj), path_(std::move(path)) {
  if (!obj.IsObject())
    throw std::runtime_error((path_.empty() ? std::string("the document") : "'" + path_ + "'") + " is not an object");
}

std::string Fields::name(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

void Fields::wrong(const std::string& what, const std::string& should_be) const {
  throw std::runtime_error("'" + name(what) + "' is not " + should_be);
}

bool Fields::has(const char* key) const { return obj_->HasMember(key); }

const rapidjson::Value& Fields::get(const char* key) const {
  const auto it = obj_->FindMember(key);
  if (it == obj_->MemberEnd()) throw std::runtime_error("'" + name(key) + "' is missing");
  return it->value;
}

std::string Fields::str(const char* key) const {
  const rapidjson::Value& v = get(key);
  if (!v.IsString()) wrong(key, "a string");
  return {v.GetString(), v.GetStringLength()};
}

double Fields::number(const char* key) const {
  const rapidjson::Value& v = get(key);
  if (!v.IsNumber()) wrong(key, "a number");
  return v.GetDouble();
}

int Fields::integer(const char* key) const {
  const rapidjson::Value& v = get(key);
  if (!v.IsInt()) wrong(key, "an integer");
  return v.GetInt();
}

int64_t Fields::int64(const char* key) const {
  const rapidjson::Value& v = get(key);
  if (!v.IsInt64()) wrong(key, "an integer");
  return v.GetInt64();
}

bool Fields::boolean(const char* key) const {
  const rapidjson::Value& v = get(key);
  if (!v.IsBool()) wrong(key, "true or false");
  return v.GetBool();
}

std::vector<std::string> Fields::strings(const char* key) const { return string_array(get(key), name(key)); }

std::vector<int> Fields::integers(const char* key) const {
  const rapidjson::Value& v = get(key);
  if (!v.IsArray()) wrong(key, "an array");
  std::vector<int> out;
  for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
    if (!v[i].IsInt()) wrong(std::string(key) + "[" + std::to_string(i) + "]", "an integer");
    out.push_back(v[i].GetInt());
  }
  return out;
}

std::map<std::string, std::string> Fields::string_map(const char* key) const {
  const rapidjson::Value& v = get(key);
  if (!v.IsObject()) wrong(key, "an object");
  std::map<std::string, std::string> out;
  for (const auto& m : v.GetObject()) {
    const std::string k(m.name.GetString(), m.name.GetStringLength());
    if (!m.value.IsString()) wrong(std::string(key) + "." + k, "a string");
    out[k] = std::string(m.value.GetString(), m.value.GetStringLength());
  }
  return out;
}

std::vector<std::vector<std::string>> Fields::string_lists(const char* key) const {
  const rapidjson::Value& v = get(key);
  if (!v.IsArray()) wrong(key, "an array");
  std::vector<std::vector<std::string>> out;
  for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
    out.push_back(string_array(v[i], name(key) + "[" + std::to_string(i) + "]"));
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> Fields::string_pairs(const char* key) const {
  std::vector<std::pair<std::string, std::string>> out;
  const std::vector<std::vector<std::string>> lists = string_lists(key);
  for (size_t i = 0; i < lists.size(); ++i) {
    if (lists[i].size() != 2) wrong(std::string(key) + "[" + std::to_string(i) + "]", "a pair [name, value]");
    out.emplace_back(lists[i][0], lists[i][1]);
  }
  return out;
}

Fields Fields::object(const char* key) const { return Fields(get(key), name(key)); }

std::vector<Fields> Fields::objects(const char* key) const {
  const rapidjson::Value& v = get(key);
  if (!v.IsArray()) wrong(key, "an array");
  std::vector<Fields> out;
  for (rapidjson::SizeType i = 0; i < v.Size(); ++i) out.emplace_back(v[i], name(key) + "[" + std::to_string(i) + "]");
  return out;
}

}  // namespace zl::json
