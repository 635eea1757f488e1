// For the targets whose input compare reads (an identity, results rows):
// side A is the fuzzed run, side B a fixed one from the compare tests; the
// report is written in every format, and the JSON and CSV must be valid
// whatever A holds (a reader that accepts a value must not make a writer
// print garbage), and so must the provenance block's facts.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <sstream>

#include "compare/provenance.hpp"
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

// The provenance block says something of every fact on both sides
// ("unknown" at least), in printable text: a recorded fact is a person's or
// a tool's text, and reaches the terminal and a Markdown row through here.
[[noreturn]] inline void invalid_provenance(const std::string& why, const zl::compare::provenance::Line& l) {
  std::fprintf(stderr, "compare's provenance block holds %s of '%s': A '%s', B '%s'\n", why.c_str(), l.what.c_str(),
               l.a.substr(0, 400).c_str(), l.b.substr(0, 400).c_str());
  std::abort();
}

inline void check_provenance(const zl::compare::Report& report) {
  for (const zl::compare::provenance::Line& l : zl::compare::provenance::lines(report)) {
    for (const std::string* v : {&l.what, &l.a, &l.b}) {
      if (v->empty()) invalid_provenance("an empty value", l);
      for (char c : *v) {
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) invalid_provenance("a control character", l);
      }
    }
  }
}

// Loads `a_dir` against `b_dir` (the fixed run by default) and writes the
// report every way.
inline void compare_against_fixed(const fs::path& a_dir, const fs::path& b_dir = fixed_run()) {
  zl::compare::Report report;
  try {
    zl::compare::Side a = zl::compare::load_side("A", a_dir.string());
    zl::compare::Side b = zl::compare::load_side("B", b_dir.string());
    report = zl::compare::compare(std::move(a), std::move(b), zl::compare::Options{});
  } catch (const std::exception&) {
    return;  // refused with a message: what a reader may do
  }
  check_provenance(report);
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
