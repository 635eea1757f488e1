// `zlcore batch`'s settings of its queue and passes, read from the command
// line: the idle check, the compile-ahead lanes and the standby worker.
#pragma once

#include <cstdint>
#include <string>

#include "command.hpp"
#include "zlcore/batch.hpp"
#include "zlcore/plan.hpp"

namespace zl::cli {

// Digits only, from 0 to `most`; otherwise UsageError naming `what` and
// saying `allowed` ("a percentage from 0 to 100").
int64_t parse_count(const std::string& text, const std::string& what, int64_t most, const std::string& allowed);

// When a device counts as idle, and how long the queue waits for one.
batch::IdlePolicy idle_policy(const po::variables_map& vm);

// The compile-ahead pass's lanes (docs/batch.md, "Compiling ahead").
void set_compile_lanes(const po::variables_map& vm, batch::BatchOptions& o);

// Whether each device keeps a standby worker (ZL_WORKER_STANDBY).
bool standby_wanted(const Plan& plan);

}  // namespace zl::cli
