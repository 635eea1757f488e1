#include "zlcore/stray_quote.hpp"

#include "../util/csv_scan.hpp"

namespace zl::records {

const char* const kQuoteNeverCloses = "a quoted field that never closes";

std::optional<size_t> after_stray_quote(const std::string& text, size_t pos, const IsRecord& is_record) {
  // Just after the record's first line (not a scan of the record, which
  // runs to the end of the text).
  const size_t nl = text.find('\n', pos);
  const size_t resume = nl == std::string::npos ? text.size() : nl + 1;
  for (size_t from = resume; from < text.size();) {
    const csv::Scanned r = csv::scan_record(text, from);
    if (r.complete && is_record(r.fields)) return resume;
    from = r.first_line_end;
  }
  return std::nullopt;
}

}  // namespace zl::records
