#include "zl_kit/json.hpp"

#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

#include "zl_kit/text.hpp"

namespace zl_kit {

// RapidJSON's SAX reader builds the tree: numbers arrive as their literal text
// (kParseNumbersAsStringsFlag), which Json::text() promises, and the iterative
// parser keeps a hostile document from deepening the stack of the process
// that loaded us; the depth cap does the same for the tree's destructor.
class JsonParser : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, JsonParser> {
 public:
  static constexpr size_t kMaxDepth = 64;

  std::optional<Json> document(std::string_view text, std::string* error) {
    rapidjson::MemoryStream ms(text.data(), text.size());
    rapidjson::Reader reader;
    constexpr unsigned kFlags =
        rapidjson::kParseIterativeFlag | rapidjson::kParseNumbersAsStringsFlag | rapidjson::kParseStopWhenDoneFlag;
    rapidjson::ParseResult ok = reader.Parse<kFlags>(ms, *this);
    std::string why;
    size_t at = ok.Offset();
    if (ok.IsError()) {
      why = too_deep_ ? "nesting too deep (more than " + std::to_string(kMaxDepth) + " levels)"
                      : rapidjson::GetParseError_En(ok.Code());
    } else {
      // StopWhenDone leaves the rest to us: only whitespace may follow.
      at = ms.Tell();
      size_t rest = text.find_first_not_of(" \t\r\n", at);
      if (rest != std::string_view::npos) {
        why = "trailing characters";
        at = rest;
      }
    }
    if (!why.empty()) {
      if (error != nullptr) *error = "invalid JSON at offset " + std::to_string(at) + ": " + why;
      return std::nullopt;
    }
    return std::move(root_);
  }

  bool Null() { return put(Json{}); }
  bool Bool(bool b) {
    Json v;
    v.type_ = Json::Type::Bool;
    v.bool_ = b;
    return put(std::move(v));
  }
  bool RawNumber(const char* s, rapidjson::SizeType n, bool) {
    Json v;
    v.type_ = Json::Type::Number;
    v.text_.assign(s, n);
    v.number_ = std::strtod(v.text_.c_str(), nullptr);
    return put(std::move(v));
  }
  bool String(const char* s, rapidjson::SizeType n, bool) {
    Json v;
    v.type_ = Json::Type::String;
    v.text_.assign(s, n);
    return put(std::move(v));
  }
  bool StartObject() { return open(Json::Type::Object); }
  bool Key(const char* s, rapidjson::SizeType n, bool) {
    key_.assign(s, n);
    return true;
  }
  bool EndObject(rapidjson::SizeType) { return close(); }
  bool StartArray() { return open(Json::Type::Array); }
  bool EndArray(rapidjson::SizeType) { return close(); }

 private:
  // Open containers, innermost last, each with the key it will be stored under.
  std::vector<std::pair<Json, std::string>> stack_;
  std::string key_;
  Json root_;
  bool too_deep_ = false;

  bool put(Json v) {
    if (stack_.empty()) {
      root_ = std::move(v);
      return true;
    }
    Json& parent = stack_.back().first;
    if (parent.type_ == Json::Type::Array) {
      parent.items_.push_back(std::move(v));
    } else {
      parent.members_.emplace_back(std::move(key_), std::move(v));
      key_.clear();
    }
    return true;
  }
  bool open(Json::Type type) {
    if (stack_.size() >= kMaxDepth) {
      too_deep_ = true;
      return false;
    }
    Json v;
    v.type_ = type;
    stack_.emplace_back(std::move(v), std::move(key_));
    key_.clear();
    return true;
  }
  bool close() {
    Json v = std::move(stack_.back().first);
    key_ = std::move(stack_.back().second);
    stack_.pop_back();
    return put(std::move(v));
  }
};

const Json* Json::get(std::string_view key) const {
  if (type_ != Type::Object) return nullptr;
  for (const auto& m : members_) {
    if (m.first == key) return &m.second;
  }
  return nullptr;
}

const Json* Json::iget(std::string_view key) const {
  if (type_ != Type::Object) return nullptr;
  const std::string want = to_lower(trim(key));
  for (const auto& m : members_) {
    if (to_lower(trim(m.first)) == want) return &m.second;
  }
  return nullptr;
}

std::string Json::scalar_text() const {
  switch (type_) {
    case Type::String:
    case Type::Number: return text_;
    case Type::Bool: return bool_ ? "true" : "false";
    default: return {};
  }
}

std::optional<int64_t> Json::as_int() const {
  if (type_ == Type::Number || type_ == Type::String) return parse_int(text_);
  return std::nullopt;
}

std::optional<Json> Json::parse(std::string_view text, std::string* error) {
  return JsonParser().document(text, error);
}

}  // namespace zl_kit
