// For the targets whose input compare reads (an identity, results rows):
// side A is the fuzzed run, side B a fixed one from the compare tests; the
// report is written in every format, and the JSON and CSV must be valid
// whatever A holds (a reader that accepts a value must not make a writer
// print garbage).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <sstream>

#include "fuzz_util.hpp"
#include "util/json_read.hpp"
#include "zlcore/batch.hpp"
#include "zlcore/compare.hpp"

namespace zl_fuzz {

inline const fs::path& fixed_run() {
  static const fs::path dir = fs::path(ZL_SOURCE_DIR) / "tests" / "compare" / "data" / "verdicts" / "b";
  return dir;
}

[[noreturn]] inline void invalid_output(const char* format, const std::string& why, const std::string& text) {
  std::fprintf(stderr, "compare --format %s wrote invalid output (%s):\n%s\n", format, why.c_str(),
               text.substr(0, 4000).c_str());
  std::abort();
}

inline void check_json(const std::string& text) {
  rapidjson::Document d;
  const std::string why = zl::json::parse(d, text);
  if (!why.empty()) invalid_output("json", why, text);
}

// Past the '#' comment lines that open the file (a reader skips them, as
// pandas' comment='#' does), every record has the header's number of fields,
// and none is torn.
inline void check_csv(const std::string& text) {
  size_t start = 0;
  while (start < text.size() && text[start] == '#') {
    const size_t nl = text.find('\n', start);
    start = nl == std::string::npos ? text.size() : nl + 1;
  }
  const std::string table = text.substr(start);
  bool torn = false;
  const auto records = zl::batch::parse_csv(table, &torn);
  if (torn) invalid_output("csv", "a torn record", text);
  for (const auto& r : records) {
    if (r.size() != records[0].size()) invalid_output("csv", "a record with another number of fields", text);
  }
}

// Loads `a_dir` against the fixed run and writes the report every way.
inline void compare_against_fixed(const fs::path& a_dir) {
  zl::compare::Report report;
  try {
    zl::compare::Side a = zl::compare::load_side("A", a_dir.string());
    zl::compare::Side b = zl::compare::load_side("B", fixed_run().string());
    report = zl::compare::compare(std::move(a), std::move(b), zl::compare::Options{});
  } catch (const std::exception&) {
    return;  // refused with a message: what a reader may do
  }
  std::ostringstream table, md, csv, json, html;
  zl::compare::write_table(table, report);
  zl::compare::write_markdown(md, report);
  zl::compare::write_csv(csv, report);
  zl::compare::write_json(json, report);
  zl::compare::write_html(html, report);
  check_json(json.str());
  check_csv(csv.str());
}

}  // namespace zl_fuzz
