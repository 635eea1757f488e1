// RapidJSON conveniences shared by the commands that print or write JSON.
#pragma once

#include <rapidjson/document.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <map>
#include <string>
#include <vector>

namespace zl::json {

using Value = rapidjson::Value;
using Alloc = rapidjson::Document::AllocatorType;

inline Value str(const std::string& s, Alloc& a) {
  return Value(s.c_str(), static_cast<rapidjson::SizeType>(s.size()), a);
}

inline Value str_array(const std::vector<std::string>& v, Alloc& a) {
  Value arr(rapidjson::kArrayType);
  for (const std::string& s : v) arr.PushBack(str(s, a), a);
  return arr;
}

inline Value str_map(const std::map<std::string, std::string>& m, Alloc& a) {
  Value obj(rapidjson::kObjectType);
  for (const auto& [k, v] : m) obj.AddMember(str(k, a), str(v, a), a);
  return obj;
}

inline std::string pretty(const Value& v) {
  rapidjson::StringBuffer buf;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> w(buf);
  w.SetIndent(' ', 2);
  v.Accept(w);
  return std::string(buf.GetString(), buf.GetSize()) + "\n";
}

inline std::string compact(const Value& v) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  v.Accept(w);
  return std::string(buf.GetString(), buf.GetSize());
}

}  // namespace zl::json
