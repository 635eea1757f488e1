#include "zlcore/stray_quote.hpp"

#include "../util/csv_scan.hpp"

namespace zl::records {

const char* const kQuoteNeverCloses = "a quoted field that never closes";

std::optional<size_t> after_stray_quote(const std::string& text, size_t pos, const IsRecord& is_record) {
  const size_t resume = csv::scan_record(text, pos).first_line_end;
  for (size_t from = resume; from < text.size();) {
    const csv::Scanned r = csv::scan_record(text, from);
    if (r.complete && is_record(r.fields)) return resume;
    from = r.first_line_end;
  }
  return std::nullopt;
}

}  // namespace zl::records
