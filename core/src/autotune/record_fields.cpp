#include "record_fields.hpp"

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

}  // namespace zl::autotune_internal
