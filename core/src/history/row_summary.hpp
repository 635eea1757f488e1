// A results row reduced to what a series keeps: per side, a center and its interval.
#pragma once

#include <vector>

#include "zlcore/compare.hpp"
#include "zlcore/history.hpp"

namespace zl::history {

// The normal quantile of a two-sided 95 % interval.
constexpr double kZ95 = 1.96;

// The FlagGems side's center is the median of its placements (the mean of a
// few placements moves with one unlucky one); its interval is the median's
// 95 % normal interval, 1.96 * 1.2533 * sd / sqrt(n). The torch side keeps
// only its mean and spread in a results row, so its sd is taken as half the
// placements' range. A row with an error or no latency gives nothing.
// Rows whose numbers are not plausible (below) are left out.
std::vector<Row> summarize(const compare::ResultRow& r);

// What a stored row must be, as summarize() writes it and the store reads it
// back: a positive finite center inside its finite interval, lo >= 0, n >= 1.
bool plausible(const Row& r);

// Rows of several runs of one op (an ab side's rounds) as one: placements
// pooled, the torch side's means averaged.
std::vector<compare::ResultRow> pool_rows(const std::vector<std::vector<compare::ResultRow>>& runs);

}  // namespace zl::history
