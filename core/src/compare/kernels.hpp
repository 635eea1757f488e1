// Profiled runs (--profile, docs/profile.md): each row's top kernels, and
// which of them moved between A and B, for the SLOWER and FASTER rows.
#pragma once

#include <rapidjson/document.h>

#include <string>
#include <vector>

#include "zlcore/compare.hpp"

namespace zl::compare {

// A row's `kernels` ({name, us}); empty when the row has none or they are
// not what --profile writes (names escaped like every other text).
std::vector<KernelTime> kernels_at(const rapidjson::Value& row);

// The kernels of either side whose time per call moved, the largest move
// first, at most `top`; a kernel one side's list lacks counts as 0 there.
// Empty unless both sides list kernels.
std::vector<KernelMove> kernels_moved(const std::vector<KernelTime>& a, const std::vector<KernelTime>& b,
                                      size_t top = 3);

// The change of one kernel, "+50.0 %", or "new" / "gone" when one side lacks it.
std::string kernel_change(const KernelMove& m);

// One line per moved kernel of each SLOWER or FASTER row: op, dtype, shape,
// verdict, kernel, A us, B us, change. Empty for unprofiled runs.
std::vector<std::vector<std::string>> kernel_lines(const Report& r);

}  // namespace zl::compare
