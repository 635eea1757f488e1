// What a batch's numbers depend on, as one flat map: the settings every op's
// run gets (level, mode, dtypes, shapes and their hash, timer, autotune and
// its source, the tuner cache, graph timing, direct repeats), the backend,
// and the knobs in the environment that change numbers. batch_identity.json
// keeps it per invocation; --resume refuses to mix two (docs/batch.md,
// "Resuming with other settings").
#pragma once

#include <map>
#include <string>

#include "command.hpp"
#include "zlcore/plan.hpp"
#include "zlcore/run.hpp"

namespace zl::cli {

std::map<std::string, std::string> batch_caliber(const Backend& backend, const Plan& plan, const RunOptions& checked,
                                                 const po::variables_map& vm);

}  // namespace zl::cli
