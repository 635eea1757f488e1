// `zlcore ab --launcher slurm` (docs/ab.md, "Slurm"): the ops split over the
// shards of a job array, each shard a whole A/B over its ops on its own
// allocation (both sides of each round on one device there), and a merge job
// that recomputes the one report from every shard's rounds. The Slurm parts
// (plan.json, the job scripts, sbatch, --wait) are batch's, core/src/batch/slurm*.
#pragma once

#include <string>
#include <vector>

#include "command.hpp"
#include "zlcore/backend.hpp"

namespace zl::cli {

// The flags only --launcher slurm takes.
inline const char* const kAbSlurmFlags[] = {"shards",     "partition", "gpus-per-shard", "time",
                                            "sbatch-arg", "wait",      "dry-run"};

// Writes the plan and submits the shards and the merge (or, with --dry-run,
// prints them). Returns 0 once submitted; with --wait, the merged A/B's code.
int ab_slurm_submit(Context& ctx, const Backend& backend, const po::options_description& desc,
                    const std::vector<std::string>& args, const po::variables_map& vm);

// `--plan P --shard i` (run shard i) or `--plan P --merge`: the A/B's flags
// come from the plan, none from this command line.
int ab_slurm_job(Context& ctx, const po::options_description& desc, const po::variables_map& vm);

}  // namespace zl::cli
