// Wording and number formats shared by every output, so the terminal table,
// markdown, CSV, JSON and HTML say the same thing the same way.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "zlcore/compare.hpp"

namespace zl::compare::text {

std::string ms(const std::optional<double>& v);     // 4 significant digits, "-" when absent
std::string ratio(const std::optional<double>& v);  // 3 decimals, "-" when absent
std::string pct(double v);
std::string geo(const Geomean& g);                  // the geomean speedup, "-" over no rows                          // one decimal and "%"
// Rounded for machine outputs, so golden files do not hinge on the last ulp.
double round_sig(double v, int digits = 6);

std::string side_line(const Side& s);  // "runs/a (run abs)" / "batch/a (batch, 3 runs)"
// What the ratios mean, stated in every output's header.
std::vector<std::string> legend(const Report& r);
// Where a difference was seen: "all ops" or the op names.
std::string where(const Difference& d, const Caliber& c);
// The one-line caliber verdict.
std::string caliber_summary(const Report& r);
// A warning when torch's own number moved between the sides; "" otherwise.
std::string control_warning(const Report& r);
std::string counts_line(const Report& r);
// Colour of a verdict in the HTML page and its plot.
const char* verdict_colour(Verdict v);

}  // namespace zl::compare::text
