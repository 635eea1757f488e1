// `zlcore ab`'s flags and their reading into ab::Options, shared by the A/B
// on this host and by a Slurm A/B's submit, shards and merge (ab_slurm.cpp),
// which all parse the same flags, so every shard has the same sides.
#pragma once

#include "command.hpp"
#include "zlcore/ab.hpp"
#include "zlcore/backend.hpp"

namespace zl::cli {

// Every flag of `zlcore ab`, the Slurm launcher's and its jobs' included.
po::options_description ab_description();

// The A/B the flags describe. `resolve_devices`: --devices (default: the
// first device) against the devices the backend offers here; a Slurm submit
// and merge run nothing, so they leave Options::devices empty.
ab::Options ab_options(Context& ctx, const Backend& backend, const po::variables_map& vm, bool resolve_devices);

}  // namespace zl::cli
