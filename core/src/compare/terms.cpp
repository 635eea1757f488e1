// The words of the results table, said where the table begins: a reader of
// a forwarded report has no docs beside it.
#include "text.hpp"

namespace zl::compare::text {

std::string column_terms(const Report& r) {
  std::string s =
      "columns: A ms, B ms: the FlagGems side's time per call in each run; speedup: A ms / B ms (above 1: B is "
      "faster); CI: the interval the speedup lies in; noise: how far the noisier side's placements spread; verdict: "
      "the test's call (method above)";
  if (shows_bar(r)) s += "; bar: how far the speedup had to pass 1; floor: the row's A/A noise floor";
  s += "; torch A ms, B ms, A/B: torch's own kernel on the same shape in the same runs, a control neither side "
       "changed: far from 1, the machine moved, not the code";
  if (shows_peak(r)) s += "; % of peak: the row against the device's peak bandwidth (bw) and compute (fp)";
  return s;
}

std::string geomean_terms() {
  return "geomean speedup: the geometric mean of the rows' speedups (above 1: B is faster); CI: its interval; "
         "torch A/B: the same mean for torch's own kernel, the control neither side changed";
}

}  // namespace zl::compare::text
