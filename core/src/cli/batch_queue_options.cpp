// `zlcore batch`'s queue and passes: the idle check, the compile-ahead lanes
// and the standby worker, each checked before anything is written.
#include "batch_queue_options.hpp"

#include <cstdlib>

#include "run_options.hpp"
#include "zlcore/errors.hpp"

namespace zl::cli {

int64_t parse_count(const std::string& text, const std::string& what, int64_t most, const std::string& allowed) {
  // Digits alone: stoi would take " 3" and "+3" but not "3 ", and call a
  // number too large for an int something other than a number.
  long long v = 0;
  bool ok = !text.empty() && text.size() <= 18;  // no overflow below 10^18
  for (const char c : text) {
    ok = ok && c >= '0' && c <= '9';
    if (ok) v = v * 10 + (c - '0');
  }
  if (ok && v <= most) return v;
  throw UsageError(what + ": '" + text + "' is not allowed; use " + allowed);
}

batch::IdlePolicy idle_policy(const po::variables_map& vm) {
  batch::IdlePolicy idle;
  idle.check = vm.count("no-idle-check") == 0;
  if (vm.count("idle-util")) {
    idle.max_util_percent =
        static_cast<int>(parse_count(vm["idle-util"].as<std::string>(), "--idle-util", batch::kMaxIdleUtilPercent,
                                     "a percentage from 0 to " + std::to_string(batch::kMaxIdleUtilPercent)));
  }
  if (vm.count("idle-mem-mib")) {
    idle.max_mem_used_mib = parse_count(vm["idle-mem-mib"].as<std::string>(), "--idle-mem-mib", batch::kMaxIdleMemMib,
                                        "a whole number of MiB from 0 to " + std::to_string(batch::kMaxIdleMemMib));
  }
  if (vm.count("busy-recheck")) idle.recheck_s = parse_seconds(vm["busy-recheck"].as<std::string>(), "--busy-recheck");
  if (vm.count("busy-give-up")) idle.give_up_s = parse_seconds(vm["busy-give-up"].as<std::string>(), "--busy-give-up");
  return idle;
}

// --compile-ahead N or auto (what the host's cores allow), --no-compile-ahead;
// off unless asked for: on an H100, 12 ops drawn at random whose compiling
// cost 0.4 s an op took longer with the pass (its lanes' imports) than
// without it (docs/results.md, "Compiling ahead on a device").
void set_compile_lanes(const po::variables_map& vm, batch::BatchOptions& o) {
  if (vm.count("no-compile-ahead") && vm.count("compile-ahead")) {
    throw UsageError("--no-compile-ahead and --compile-ahead: give one of them");
  }
  if (vm.count("no-compile-ahead")) {
    o.compile_lanes = 0;
    o.compile_lanes_from = "--no-compile-ahead";
    return;
  }
  if (!vm.count("compile-ahead")) {
    o.compile_lanes = 0;
    o.compile_lanes_from = "default";
    return;
  }
  const std::string given = vm["compile-ahead"].as<std::string>();
  if (given == "auto") {
    o.compile_lanes = batch::auto_compile_lanes();
    o.compile_lanes_from = "auto";
    return;
  }
  o.compile_lanes =
      static_cast<int>(parse_count(given, "--compile-ahead", batch::kMaxCompileLanes,
                                   "auto or a number of lanes from 0 to " + std::to_string(batch::kMaxCompileLanes)));
  o.compile_lanes_from = "--compile-ahead";
}

// ZL_WORKER_STANDBY: auto (the default) keeps a standby worker where the
// timer's clock runs on the device; a host clock times CPU work, which a
// standby's imports beside it would slow.
bool standby_wanted(const Plan& plan) {
  const char* raw = std::getenv("ZL_WORKER_STANDBY");
  const std::string v = raw != nullptr ? raw : "";
  if (v.empty() || v == "auto") return plan.timer_clock == "device";
  if (v == "1" || v == "on") return true;
  if (v == "0" || v == "off") return false;
  throw UsageError("ZL_WORKER_STANDBY='" + v + "' is not allowed; use auto, 1 (on) or 0 (off)");
}

}  // namespace zl::cli
