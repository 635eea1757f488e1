// The caliber check before the rounds (compare's own check, on the first
// measured round's A and B runs): an A/B of sides that differ where nobody
// said they would is refused before it costs the remaining rounds.
#include "runner_parts.hpp"
#include "zlcore/compare.hpp"

namespace zl::ab {

CaliberVerdict check_round_caliber(const std::filesystem::path& round_dir,
                                   const std::vector<std::string>& expect_diff) {
  const compare::Side a = compare::load_side("A", (round_dir / "A").string());
  const compare::Side b = compare::load_side("B", (round_dir / "B").string());
  const compare::Caliber c = compare::check_caliber(a, b, expect_diff);
  CaliberVerdict v;
  v.fair = c.unexpected() == 0 && c.pairs > 0;
  v.text = "caliber (first round, " + round_dir.filename().string() + "): autotune " + c.autotune_pairing + "\n";
  for (const compare::Difference& d : c.differences) {
    v.text += "  " + std::string(d.expected ? "declared  " : "UNDECLARED ") + d.key + ": A " + d.a + ", B " + d.b +
              (d.detail.empty() ? "" : " (" + d.detail + ")") + "\n";
  }
  for (const std::string& n : c.notes) v.text += "  note: " + n + "\n";
  v.summary = v.fair ? "fair: " + std::to_string(c.differences.size()) + " declared difference(s); autotune " +
                           c.autotune_pairing
                     : std::to_string(c.unexpected()) + " undeclared difference(s)";
  return v;
}

}  // namespace zl::ab
