#include "json_read.hpp"

#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

#include <sstream>

namespace zl::json {
namespace {

// Passes every SAX event on to the document, and stops the reader at the
// first container that would open past the limit.
class DepthLimit {
 public:
  DepthLimit(rapidjson::Document& doc, unsigned max_depth) : doc_(doc), max_(max_depth) {}
  bool too_deep() const { return too_deep_; }

  bool Null() { return doc_.Null(); }
  bool Bool(bool b) { return doc_.Bool(b); }
  bool Int(int i) { return doc_.Int(i); }
  bool Uint(unsigned u) { return doc_.Uint(u); }
  bool Int64(int64_t i) { return doc_.Int64(i); }
  bool Uint64(uint64_t u) { return doc_.Uint64(u); }
  bool Double(double d) { return doc_.Double(d); }
  bool RawNumber(const char* s, rapidjson::SizeType n, bool copy) { return doc_.RawNumber(s, n, copy); }
  bool String(const char* s, rapidjson::SizeType n, bool copy) { return doc_.String(s, n, copy); }
  bool Key(const char* s, rapidjson::SizeType n, bool copy) { return doc_.Key(s, n, copy); }
  bool StartObject() { return open() && doc_.StartObject(); }
  bool EndObject(rapidjson::SizeType members) {
    --depth_;
    return doc_.EndObject(members);
  }
  bool StartArray() { return open() && doc_.StartArray(); }
  bool EndArray(rapidjson::SizeType elements) {
    --depth_;
    return doc_.EndArray(elements);
  }

 private:
  bool open() {
    if (++depth_ <= max_) return true;
    too_deep_ = true;
    return false;
  }

  rapidjson::Document& doc_;
  unsigned max_;
  unsigned depth_ = 0;
  bool too_deep_ = false;
};

}  // namespace

std::string parse(rapidjson::Document& doc, const char* data, size_t size, unsigned max_depth) {
  std::string error;
  // Populate hands the document's own SAX handler to the generator and
  // keeps the value only when the generator says the parse succeeded.
  auto generate = [&](rapidjson::Document& target) {
    DepthLimit limit(target, max_depth);
    rapidjson::MemoryStream stream(data, size);
    rapidjson::EncodedInputStream<rapidjson::UTF8<>, rapidjson::MemoryStream> in(stream);
    rapidjson::Reader reader;
    rapidjson::ParseResult r = reader.Parse<rapidjson::kParseIterativeFlag>(in, limit);
    if (!r.IsError()) return true;
    if (limit.too_deep()) {
      error = "nesting deeper than " + std::to_string(max_depth) + " levels at offset " + std::to_string(r.Offset());
    } else {
      error = std::string(rapidjson::GetParseError_En(r.Code())) + " at offset " + std::to_string(r.Offset());
    }
    return false;
  };
  doc.SetNull();
  doc.Populate(generate);
  if (!error.empty()) doc.SetNull();
  return error;
}

const rapidjson::Value* at_path(const rapidjson::Value& root, const std::string& dotted) {
  const rapidjson::Value* cur = &root;
  std::istringstream parts(dotted);
  std::string part;
  while (std::getline(parts, part, '.')) {
    if (!cur->IsObject()) return nullptr;
    auto it = cur->FindMember(part.c_str());
    if (it == cur->MemberEnd()) return nullptr;
    cur = &it->value;
  }
  return cur;
}

}  // namespace zl::json
