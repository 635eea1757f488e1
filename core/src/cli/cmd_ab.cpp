// `zlcore ab`: which A/B this invocation is (on this host, a Slurm submit, or
// one of a Slurm A/B's jobs); ab_options.cpp reads the flags, core/src/ab/
// does the rest.
#include <filesystem>

#include "ab_options.hpp"
#include "ab_slurm.hpp"
#include "option_parser.hpp"
#include "zlcore/ab.hpp"
#include "zlcore/errors.hpp"

namespace fs = std::filesystem;

namespace zl::cli {

int cmd_ab(Context& ctx, const std::vector<std::string>& args) {
  const po::options_description desc = ab_description();
  po::variables_map vm;
  if (!parse("ab", desc, args, vm)) return kExitOk;
  if (vm.count("plan") || vm.count("shard") || vm.count("merge")) return ab_slurm_job(ctx, desc, vm);

  const std::string launcher = vm.count("launcher") ? vm["launcher"].as<std::string>() : "local";
  if (launcher != "local" && launcher != "slurm") {
    throw UsageError("ab: --launcher '" + launcher + "' is not available (local, slurm)");
  }
  const Backend& backend = ctx.registry().select(flag_or_env(vm, "backend", "ZL_BACKEND"), "--backend / ZL_BACKEND");
  if (launcher == "slurm") return ab_slurm_submit(ctx, backend, desc, args, vm);
  for (const char* flag : kAbSlurmFlags) {
    if (vm.count(flag)) throw UsageError(needs_cluster_launcher("ab", flag, "--launcher slurm"));
  }
  const ab::Options o = ab_options(ctx, backend, vm, true);
  std::error_code bad;
  (void)fs::status(o.out_dir, bad);
  if (bad && bad != std::errc::no_such_file_or_directory) {
    throw UsageError("ab: --out " + o.out_dir + " cannot be used: " + bad.message());
  }
  // Its rounds.csv points into shards/: only the Slurm merge may rewrite it.
  if (fs::exists(fs::path(o.out_dir) / "plan.json")) {
    throw UsageError("ab: --out " + o.out_dir +
                     " is a Slurm A/B (it has plan.json); continue it with --launcher slurm");
  }
  return ab::run_ab(o);
}

}  // namespace zl::cli
