// Pieces of the HTML page that are more than markup.
#pragma once

#include <string>

#include "zlcore/compare.hpp"

namespace zl::compare::html {

std::string escape(const std::string& s);
// The speedup of every compared row as one inline SVG bar chart, bars grouped
// by op on a log scale around 1, coloured by verdict.
std::string speedup_plot(const Report& r);

}  // namespace zl::compare::html
