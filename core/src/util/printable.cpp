#include "printable.hpp"

#include <cstdio>

namespace zl {
namespace {

std::string hex_escape(unsigned char c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\x%02x", c);
  return buf;
}

// Length of the UTF-8 sequence starting at s[i], 0 when it is not one. Strict
// (RFC 3629): no overlong forms, no surrogates (ED A0..BF), nothing past
// U+10FFFF, so what passes is what every JSON reader accepts.
size_t utf8_length(const std::string& s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  size_t n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xC2 && c <= 0xDF ? 2 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
  }
  const unsigned char second = b(i + 1);
  if ((c == 0xE0 && second < 0xA0) || (c == 0xED && second > 0x9F)) return 0;
  if ((c == 0xF0 && second < 0x90) || (c == 0xF4 && second > 0x8F)) return 0;
  return n;
}

}  // namespace

std::string printable(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
      ++i;
    } else if (c == '\n') {
      out += "\\n";
      ++i;
    } else if (c == '\t') {
      out += "\\t";
      ++i;
    } else if (c < 0x80) {
      out += hex_escape(c);
      ++i;
    } else if (const size_t n = utf8_length(text, i); n > 0) {
      const auto second = static_cast<unsigned char>(text[i + 1]);
      if (n == 2 && c == 0xC2 && second < 0xA0) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", second);
        out += buf;
      } else {
        out.append(text, i, n);
      }
      i += n;
    } else {
      out += hex_escape(c);
      ++i;
    }
  }
  return out;
}

std::string printable_lines(const std::string& text) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    const size_t nl = text.find('\n', start);
    out += printable(text.substr(start, nl == std::string::npos ? std::string::npos : nl - start));
    if (nl == std::string::npos) break;
    out += '\n';
    start = nl + 1;
  }
  return out;
}

}  // namespace zl
