// Steps grouped as an owner reads them: per op, side and run where the level
// moved, with the shapes that moved and what changed. Every format lists these.
#pragma once

#include <string>
#include <vector>

#include "zlcore/history.hpp"

namespace zl::history {

struct OpStep {
  std::string op, side;
  size_t last_good = 0, first_bad = 0;
  size_t series = 0;    // how many (dtype, shape) series moved there
  double change = 0;    // their median change
  bool is_new = false;  // the latest run is the first bad one
  std::vector<Change> changed;
};

// Regressions first (largest first), then improvements.
std::vector<OpStep> op_steps(const Report& r);

// "+30.1 %", "-4.0 %".
std::string percent(double fraction);
// "versions.torch 2.5.0 -> 2.6.0; env.X (none) -> 1", or "(no identity key differs)".
std::string changed_text(const std::vector<Change>& c);
// "run 7 (2026-11-07T02:00:00Z)".
std::string run_label(const Report& r, size_t run);

}  // namespace zl::history
