// The report as CSV: one record per series step, what a spreadsheet or a
// dashboard ingests.
#include "../util/csv.hpp"
#include "groups.hpp"

namespace zl::history {

void write_csv(std::ostream& out, const Report& r) {
  out << csv::record({"op", "dtype", "shape", "side", "last_good_run", "last_good_started", "last_good_dir",
                      "first_bad_run", "first_bad_started", "first_bad_dir", "before_ms", "after_ms", "change_pct", "z",
                      "new", "changed"});
  for (const ReportStep& s : r.steps) {
    const RunRef& good = r.runs.at(s.step.last_good);
    const RunRef& bad = r.runs.at(s.step.first_bad);
    out << csv::record({s.op, s.dtype, s.shape, s.side, std::to_string(s.step.last_good + 1), good.started, good.path,
                        std::to_string(s.step.first_bad + 1), bad.started, bad.path, std::to_string(s.step.before_ms),
                        std::to_string(s.step.after_ms), std::to_string(s.step.change * 100), std::to_string(s.step.z),
                        s.is_new ? "true" : "false", changed_text(s.changed)});
  }
}

}  // namespace zl::history
