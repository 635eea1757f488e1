// Pieces of the HTML page that are more than markup.
#pragma once

#include <string>

#include "zlcore/compare.hpp"

namespace zl::compare::html {

std::string escape(const std::string& s);
// The speedup of every compared row as one inline SVG bar chart, bars grouped
// by op on a log scale around 1, coloured by verdict.
std::string speedup_plot(const Report& r);
// Where and with what each side was measured, as a section with a table
// (html_provenance.cpp).
std::string provenance_section(const Report& r);

}  // namespace zl::compare::html
