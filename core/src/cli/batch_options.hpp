// `zlcore batch`'s flags and their reading into batch::BatchOptions: every
// value checked once, before the batch writes anything, the devices resolved
// on this host (a cluster launcher leaves them to its nodes), and what
// batch_identity.json records of the command line.
#pragma once

#include <memory>

#include "command.hpp"
#include "zlcore/backend.hpp"
#include "zlcore/batch.hpp"

namespace zl::cli {

// Every flag of `zlcore batch`, the Slurm launcher's and its jobs' included.
po::options_description batch_description();

// The launcher --launcher names; one line listing those available otherwise.
std::unique_ptr<batch::Launcher> launcher_named(const po::variables_map& vm);

// The batch the flags describe, for `backend`. `*launcher` is set to the one
// --launcher names, found after the run options are checked and before the
// plan is made, the order in which their mistakes are reported.
batch::BatchOptions batch_options(Context& ctx, const Backend& backend, const po::variables_map& vm,
                                  std::unique_ptr<batch::Launcher>* launcher);

}  // namespace zl::cli
