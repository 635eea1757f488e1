// One timeline as inline SVG: each series' level relative to its own median,
// with its interval, and labelled markers between runs. Every label is text
// in the picture, so a screenshot carries it (nothing shows on hover only).
#pragma once

#include <string>
#include <vector>

#include "zlcore/history.hpp"

namespace zl::history {

struct Marker {
  size_t before_run = 0;  // drawn between this run and the one before it
  std::string label;
  bool step = true;  // false: a segment break (dashed, grey)
};

std::string timeline_svg(const std::vector<const ReportSeries*>& series, const std::vector<Marker>& markers,
                         size_t runs, int width, int height);

}  // namespace zl::history
