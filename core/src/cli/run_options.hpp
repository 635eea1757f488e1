// `zlcore run`'s options and the checks on their values, shared with `batch`:
// a batch checks every value its ops' runs would check, once, before it
// writes anything (a bad --level must not cost a batch directory and one
// failed op per op).
#pragma once

#include "command.hpp"
#include "zlcore/run.hpp"

namespace zl::cli {

void add_run_options(po::options_description& desc);
// The run options from flags and their variables (the flag wins). Throws
// UsageError for a value not allowed (level, mode, shape mode, booleans,
// direct repeats, the autotune mode and its replay source, the timeout).
RunOptions run_options_from(const po::variables_map& vm);
// Each name must be one FlagGems' --dtypes takes: pytest refuses any other
// only after the imports, as a multi-line usage error. Throws UsageError
// naming the word, the nearest allowed one and the whole list.
void check_dtypes(const std::vector<std::string>& dtypes);
// Seconds for a time limit: a finite number from 0 (none) to one week.
// Throws UsageError naming `what` otherwise (-1, nan and inf included).
double parse_seconds(const std::string& text, const std::string& what);

}  // namespace zl::cli
