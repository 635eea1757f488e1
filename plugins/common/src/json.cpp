#include "zl_kit/json.hpp"

#include <cctype>
#include <cerrno>
#include <cstdlib>

#include "zl_kit/text.hpp"

namespace zl_kit {

// Recursive descent with a depth cap: tool output is small, but a hostile or
// corrupt file must not overflow the stack of the process that loaded us.
class JsonParser {
 public:
  explicit JsonParser(std::string_view s) : s_(s) {}

  std::optional<Json> document(std::string* error) {
    Json v;
    skip_ws();
    if (!value(v, 0)) return fail(error);
    skip_ws();
    if (pos_ != s_.size()) {
      why_ = "trailing characters";
      return fail(error);
    }
    return v;
  }

 private:
  static constexpr int kMaxDepth = 64;
  std::string_view s_;
  size_t pos_ = 0;
  std::string why_;

  std::optional<Json> fail(std::string* error) {
    if (error != nullptr) *error = "invalid JSON at offset " + std::to_string(pos_) + ": " + why_;
    return std::nullopt;
  }

  void skip_ws() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
  }

  bool literal(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word) {
      why_ = "unexpected token";
      return false;
    }
    pos_ += word.size();
    return true;
  }

  bool value(Json& out, int depth) {
    if (depth > kMaxDepth) {
      why_ = "nesting too deep";
      return false;
    }
    if (pos_ >= s_.size()) {
      why_ = "unexpected end";
      return false;
    }
    char c = s_[pos_];
    if (c == '{') return object(out, depth);
    if (c == '[') return array(out, depth);
    if (c == '"') {
      out.type_ = Json::Type::String;
      return string(out.text_);
    }
    if (c == 't') {
      out.type_ = Json::Type::Bool;
      out.bool_ = true;
      return literal("true");
    }
    if (c == 'f') {
      out.type_ = Json::Type::Bool;
      out.bool_ = false;
      return literal("false");
    }
    if (c == 'n') {
      out.type_ = Json::Type::Null;
      return literal("null");
    }
    return number(out);
  }

  bool number(Json& out) {
    size_t start = pos_;
    if (pos_ < s_.size() && s_[pos_] == '-') ++pos_;
    size_t digits = pos_;
    while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    if (pos_ == digits) {
      why_ = "unexpected character";
      pos_ = start;
      return false;
    }
    if (pos_ < s_.size() && s_[pos_] == '.') {
      ++pos_;
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    }
    out.type_ = Json::Type::Number;
    out.text_ = std::string(s_.substr(start, pos_ - start));
    out.number_ = std::strtod(out.text_.c_str(), nullptr);
    return true;
  }

  static void put_utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  bool hex4(uint32_t& cp) {
    if (pos_ + 4 > s_.size()) {
      why_ = "short \\u escape";
      return false;
    }
    cp = 0;
    for (int i = 0; i < 4; ++i) {
      char h = s_[pos_++];
      cp <<= 4;
      if (h >= '0' && h <= '9') cp |= static_cast<uint32_t>(h - '0');
      else if (h >= 'a' && h <= 'f') cp |= static_cast<uint32_t>(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F') cp |= static_cast<uint32_t>(h - 'A' + 10);
      else {
        why_ = "bad \\u escape";
        return false;
      }
    }
    return true;
  }

  bool string(std::string& out) {
    ++pos_;  // opening quote
    while (pos_ < s_.size()) {
      char c = s_[pos_++];
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) {
        why_ = "control character in string";
        return false;
      }
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= s_.size()) break;
      char e = s_[pos_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          uint32_t cp = 0;
          if (!hex4(cp)) return false;
          if (cp >= 0xD800 && cp < 0xDC00 && s_.substr(pos_, 2) == "\\u") {
            pos_ += 2;
            uint32_t low = 0;
            if (!hex4(low)) return false;
            if (low >= 0xDC00 && low < 0xE000) cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          put_utf8(out, cp);
          break;
        }
        default:
          why_ = "bad escape";
          return false;
      }
    }
    why_ = "unterminated string";
    return false;
  }

  bool array(Json& out, int depth) {
    out.type_ = Json::Type::Array;
    ++pos_;
    skip_ws();
    if (pos_ < s_.size() && s_[pos_] == ']') {
      ++pos_;
      return true;
    }
    while (true) {
      Json item;
      skip_ws();
      if (!value(item, depth + 1)) return false;
      out.items_.push_back(std::move(item));
      skip_ws();
      if (pos_ < s_.size() && s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < s_.size() && s_[pos_] == ']') {
        ++pos_;
        return true;
      }
      why_ = "expected ',' or ']'";
      return false;
    }
  }

  bool object(Json& out, int depth) {
    out.type_ = Json::Type::Object;
    ++pos_;
    skip_ws();
    if (pos_ < s_.size() && s_[pos_] == '}') {
      ++pos_;
      return true;
    }
    while (true) {
      skip_ws();
      if (pos_ >= s_.size() || s_[pos_] != '"') {
        why_ = "expected a key";
        return false;
      }
      std::string key;
      if (!string(key)) return false;
      skip_ws();
      if (pos_ >= s_.size() || s_[pos_] != ':') {
        why_ = "expected ':'";
        return false;
      }
      ++pos_;
      skip_ws();
      Json v;
      if (!value(v, depth + 1)) return false;
      out.members_.emplace_back(std::move(key), std::move(v));
      skip_ws();
      if (pos_ < s_.size() && s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < s_.size() && s_[pos_] == '}') {
        ++pos_;
        return true;
      }
      why_ = "expected ',' or '}'";
      return false;
    }
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
  return JsonParser(text).document(error);
}

}  // namespace zl_kit
