// The results of a run as a terminal table, from results.jsonl.
#pragma once

#include <string>

namespace zl {

std::string format_results_table(const std::string& results_jsonl);

}  // namespace zl
