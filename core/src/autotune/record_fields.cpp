#include "record_fields.hpp"

#include <iostream>

#include "../util/json_read.hpp"
#include "zlcore/atomic_file.hpp"

namespace zl::autotune_internal {

const rapidjson::Value* member(const rapidjson::Value& v, const char* key) {
  if (!v.IsObject()) return nullptr;
  auto it = v.FindMember(key);
  return it == v.MemberEnd() ? nullptr : &it->value;
}

std::string str_member(const rapidjson::Value& v, const char* key) {
  const rapidjson::Value* m = member(v, key);
  return m != nullptr && m->IsString() ? m->GetString() : std::string();
}

int int_member(const rapidjson::Value& v, const char* key, int fallback) {
  const rapidjson::Value* m = member(v, key);
  return m != nullptr && m->IsInt() ? m->GetInt() : fallback;
}

rapidjson::Document load_json(const std::filesystem::path& file) {
  rapidjson::Document d;
  std::error_code ec;
  if (std::filesystem::is_regular_file(file, ec)) {
    try {
      const std::string why = json::parse(d, read_file(file.string()));
      if (!why.empty()) std::cerr << "zlcore: " << file.string() << " is not valid JSON (" << why << "); ignored\n";
    } catch (const std::exception&) {
      d.SetNull();
    }
  }
  if (!d.IsObject()) d.SetObject();
  return d;
}

}  // namespace zl::autotune_internal
