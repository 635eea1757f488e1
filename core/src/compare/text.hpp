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
std::string pct(double v);                          // one decimal and "%"
std::string signed_us(double ms);                   // a difference in microseconds: "-0.193 us", 3 significant digits
std::string geo(const Geomean& g);                  // the geomean speedup, "-" over no rows
// "[0.991, 1.004]", "-" when absent.
std::string interval(const std::optional<double>& lo, const std::optional<double>& hi);
std::string geo_interval(const Geomean& g);
// The p-value to 2 significant digits, "-" when untested.
std::string p_value(const std::optional<double>& p);
// Rounded for machine outputs, so golden files do not hinge on the last ulp.
double round_sig(double v, int digits = 6);

std::string side_line(const Side& s);  // "runs/a (run abs)" / "batch/a (batch, 3 runs)"
// What the ratios mean, stated in every output's header.
std::vector<std::string> legend(const Report& r);
// The verdict method, its nominal false-positive rate and its intervals, in
// every output's header (also the calibration report's).
std::vector<std::string> method_lines(const Options& o);
// The name of the method alone, for the JSON field.
std::string method_name();
// Which noise-floor file widened the bars, and how many: "" without one.
std::string noise_floor_line(const Report& r);
// Rows tested on in-run repeats: "" when there are none.
std::string repeats_line(const Report& r);
// Whether any row's bar is above the threshold: the outputs then show a bar column.
bool shows_bar(const Report& r);
// True when any row knows its share of the device's peak (ABI 1.2 runs); the
// column is left out otherwise, so older runs read as they did.
bool shows_peak(const Report& r);
// "bw 86/88 %  fp 40/41 %": A/B shares of peak bandwidth and compute.
std::string peak(const Compared& c);
// Where a difference was seen: "all ops" or the op names.
std::string where(const Difference& d, const Caliber& c);
// The one-line caliber verdict.
std::string caliber_summary(const Report& r);
// A warning when torch's own number moved between the sides; "" otherwise.
std::string control_warning(const Report& r);
std::string counts_line(const Report& r);
// The answer in one sentence, the first line of every report: which side is
// faster overall and by how much, with the geomean's interval, and on how
// many rows the test found B faster or slower. "No overall difference shown"
// when the interval holds 1.
std::string headline(const Report& r);
// What each column of the results table means, in one line before it
// (terms.cpp), and the same for the geomean tables.
std::string column_terms(const Report& r);
std::string geomean_terms();
// Colour of a verdict in the HTML page and its plot.
const char* verdict_colour(Verdict v);

}  // namespace zl::compare::text
