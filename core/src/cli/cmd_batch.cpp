// `zlcore batch`: many ops over the devices of one host (core/src/batch/).
// This file picks between the batch and a job of a cluster batch;
// batch_options.cpp turns the command line into BatchOptions, and the
// launcher does the rest.
#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <memory>

#include "batch_options.hpp"
#include "command.hpp"
#include "option_parser.hpp"
#include "zlcore/batch.hpp"
#include "zlcore/errors.hpp"

namespace zl::cli {
namespace {

// `run`'s selectors of one op. Exported for a run, they would reach every op
// of the batch through the environment and take it over (TEST_NODE makes
// every row the same test): a batch names its ops with --ops.
void refuse_per_op_selectors() {
  for (const char* var : {"TEST_NODE", "OP_FILE", "OP"}) {
    const char* v = std::getenv(var);
    if (v == nullptr || *v == '\0') continue;
    throw UsageError(std::string(var) + "='" + v +
                     "' is set, but it selects the op of one `zlcore run` and does not "
                     "apply to a batch, which names its ops with --ops / --ops-file: unset it (env -u " +
                     var + ")");
  }
}

// What a job of a cluster batch may be given: which job it is and where the
// plan is. Everything else it reads from the plan, which the submit wrote
// with every batch option, so that a new option reaches the jobs without
// being passed along as a flag.
const char* const kJobFlags[] = {"shard", "merge", "plan", "backend", "launcher"};

int run_job(Context& ctx, const po::variables_map& vm) {
  for (const auto& entry : vm) {
    const std::string& name = entry.first;
    if (entry.second.defaulted() ||
        std::find(std::begin(kJobFlags), std::end(kJobFlags), name) != std::end(kJobFlags)) {
      continue;
    }
    throw UsageError("--" + name + " does not apply to --shard / --merge: a job takes the batch's options from --plan");
  }
  if (vm.count("shard") && vm.count("merge")) throw UsageError("--shard and --merge: give one");
  if (!vm.count("plan")) throw UsageError("--shard / --merge need --plan, the plan file the submit wrote");
  const Backend& backend = ctx.registry().select(flag_or_env(vm, "backend", "ZL_BACKEND"), "--backend / ZL_BACKEND");
  std::unique_ptr<batch::Launcher> launcher = launcher_named(vm);
  batch::BatchOptions o;
  o.backend = backend.name();
  o.backend_dir = ctx.backend_dir();
  o.launcher_options["plan"] = vm["plan"].as<std::string>();
  if (vm.count("shard")) o.launcher_options["shard"] = vm["shard"].as<std::string>();
  if (vm.count("merge")) o.launcher_options["merge"] = "1";
  if (std::string(launcher->name()) == "local") {
    throw UsageError("--" + std::string(vm.count("shard") ? "shard" : "merge") + " needs a cluster --launcher");
  }
  return launcher->launch(o, backend);
}

}  // namespace

int cmd_batch(Context& ctx, const std::vector<std::string>& args) {
  po::options_description desc = batch_description();
  po::variables_map vm;
  if (!parse("batch", desc, args, vm)) return 0;
  refuse_per_op_selectors();
  if (vm.count("shard") || vm.count("merge") || vm.count("plan")) {
    if (!vm.count("shard") && !vm.count("merge")) {
      throw UsageError("--plan is for the jobs of a cluster batch (--shard, --merge)");
    }
    return run_job(ctx, vm);
  }
  const Backend& backend = ctx.registry().select(flag_or_env(vm, "backend", "ZL_BACKEND"), "--backend / ZL_BACKEND");
  std::unique_ptr<batch::Launcher> launcher;
  const batch::BatchOptions o = batch_options(ctx, backend, vm, &launcher);
  return launcher->launch(o, backend);
}

}  // namespace zl::cli
