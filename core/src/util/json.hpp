// RapidJSON conveniences shared by the commands that print or write JSON.
#pragma once

#include <rapidjson/document.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cmath>
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

// JSON has no NaN or infinity, and RapidJSON's writer stops at the first
// one, leaving the document cut off mid-object. Whatever number reaches a
// writer, what comes out parses: a non-finite one is written as null (the
// field that holds it says why, where the number is a statistic).
template <typename Writer>
class FiniteOnly {
 public:
  explicit FiniteOnly(Writer& w) : w_(w) {}
  bool Null() { return w_.Null(); }
  bool Bool(bool b) { return w_.Bool(b); }
  bool Int(int i) { return w_.Int(i); }
  bool Uint(unsigned u) { return w_.Uint(u); }
  bool Int64(int64_t i) { return w_.Int64(i); }
  bool Uint64(uint64_t u) { return w_.Uint64(u); }
  bool Double(double d) { return std::isfinite(d) ? w_.Double(d) : w_.Null(); }
  bool RawNumber(const char* s, rapidjson::SizeType n, bool copy) { return w_.RawNumber(s, n, copy); }
  bool String(const char* s, rapidjson::SizeType n, bool copy) { return w_.String(s, n, copy); }
  bool Key(const char* s, rapidjson::SizeType n, bool copy) { return w_.Key(s, n, copy); }
  bool StartObject() { return w_.StartObject(); }
  bool EndObject(rapidjson::SizeType n) { return w_.EndObject(n); }
  bool StartArray() { return w_.StartArray(); }
  bool EndArray(rapidjson::SizeType n) { return w_.EndArray(n); }

 private:
  Writer& w_;
};

inline std::string pretty(const Value& v) {
  rapidjson::StringBuffer buf;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> w(buf);
  w.SetIndent(' ', 2);
  FiniteOnly<decltype(w)> finite(w);
  v.Accept(finite);
  return std::string(buf.GetString(), buf.GetSize()) + "\n";
}

inline std::string compact(const Value& v) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  FiniteOnly<decltype(w)> finite(w);
  v.Accept(finite);
  return std::string(buf.GetString(), buf.GetSize());
}

}  // namespace zl::json
