// A results row reduced to what a series keeps: per side, a center and its interval.
#pragma once

#include <vector>

#include "zlcore/compare.hpp"
#include "zlcore/history.hpp"

namespace zl::history {

// The FlagGems side's center is the median of its placements (the mean of a
// few placements moves with one unlucky one); its interval is the median's
// 95 % normal interval, 1.96 * 1.2533 * sd / sqrt(n). The torch side keeps
// only its mean and spread in a results row, so its sd is taken as half the
// placements' range. A row with an error or no latency gives nothing.
std::vector<Row> summarize(const compare::ResultRow& r);

// Rows of several runs of one op (an ab side's rounds) as one: placements
// pooled, the torch side's means averaged.
std::vector<compare::ResultRow> pool_rows(const std::vector<std::vector<compare::ResultRow>>& runs);

}  // namespace zl::history
