// A record whose quoted field never closes runs to the end of the file, and
// means one of two things in a file zlcore appends to (ops_status.csv,
// rounds.csv): a person or a tool left a stray quote, and the records after
// it are whole; or a crash tore the last record mid-field. Both readers tell
// them apart the same way, here.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace zl::records {

// What a reader names such a record, after "line N: ".
extern const char* const kQuoteNeverCloses;

// Whether the fields of one whole record read as a record of the file.
using IsRecord = std::function<bool(const std::vector<std::string>& fields)>;

// `pos` starts a record whose quote never closes. When a later line starts a
// whole record that `is_record` accepts, the quote was stray: reading goes on
// just after the record's first line (returned), so only that line is lost.
// Otherwise it is a torn last record: nullopt.
std::optional<size_t> after_stray_quote(const std::string& text, size_t pos, const IsRecord& is_record);

}  // namespace zl::records
