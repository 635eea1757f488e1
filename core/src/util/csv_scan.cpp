#include "csv_scan.hpp"

namespace zl::csv {

Scanned scan_record(const std::string& t, size_t pos) {
  Scanned r;
  const size_t nl = t.find('\n', pos);
  r.first_line_end = nl == std::string::npos ? t.size() : nl + 1;
  std::string field;
  bool quoted = false, at_start = true;
  for (size_t i = pos; i < t.size(); ++i) {
    const char c = t[i];
    if (quoted) {
      if (c == '"' && i + 1 < t.size() && t[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        r.multiline = r.multiline || c == '\n';
        field += c;
      }
      continue;
    }
    if (c == '"' && at_start) {
      quoted = true;
      at_start = false;
    } else if (c == ',') {
      r.fields.push_back(std::move(field));
      field.clear();
      at_start = true;
    } else if (c == '\n') {
      if (i > pos && t[i - 1] == '\r' && !field.empty() && field.back() == '\r') field.pop_back();
      r.fields.push_back(std::move(field));
      r.end = i + 1;
      r.complete = true;
      return r;
    } else {
      field += c;
      at_start = false;
    }
  }
  r.fields.push_back(std::move(field));
  r.end = t.size();
  return r;
}

}  // namespace zl::csv
