// Stage `child_command`: the pytest child's argv and environment.
#include <cstdlib>
#include <filesystem>

#include "../util/text.hpp"
#include "device_facts.hpp"
#include "stages.hpp"
#include "zlcore/l2_policy.hpp"
#include "zlcore/paths.hpp"

namespace zl::run_stage {

namespace fs = std::filesystem;

ChildCommand child_command(const Backend& backend, const Plan& plan, const Resolved& r, const Caches& caches,
                           const std::string& run_dir) {
  const RunOptions& o = r.options;
  const fs::path rd(run_dir);
  ChildCommand c;
  BenchArgs bench{o.level, o.mode, o.dtypes, o.shape_mode == "file" ? o.shape_file : ""};
  c.argv = {o.python, "-m", "pytest", "-s", "-p", "no:cacheprovider"};
  for (const std::string& m : plan.pytest_plugins) {
    c.argv.push_back("-p");
    c.argv.push_back(m);
  }
  for (const std::string& a : r.provider.pytest_args(r.target, bench)) c.argv.push_back(a);
  for (const std::string& a : o.extra_pytest_args) c.argv.push_back(a);

  std::map<std::string, std::string>& env = c.env;
  env = plan.child_env;
  const char* pp = std::getenv("PYTHONPATH");
  env["PYTHONPATH"] = python_plugin_dir() + (pp != nullptr && *pp != '\0' ? ":" + std::string(pp) : "");
  env["PYTHONUNBUFFERED"] = "1";
  for (const std::string& var : backend.visibility_env()) env[var] = r.device.visibility_value;
  if (!backend.framework_vendor().empty()) env[FlagGemsProvider::vendor_env()] = backend.framework_vendor();
  env["ZL_RUN_DIR"] = run_dir;
  env["ZL_RESULTS_FILE"] = (rd / "results.jsonl").string();
  env["ZL_CHILD_DIR"] = (rd / ".child").string();
  env["ZL_BACKEND"] = backend.name();
  env["ZL_TORCH_DEVICE"] = backend.torch_device();
  env["ZL_VISIBILITY_ENV"] = text::join(backend.visibility_env(), ",");
  env["ZL_EXPECT_DEVICE_ID"] = r.device.id;
  std::vector<std::string> caps;
  for (const auto& [k, v] : backend.capabilities()) caps.push_back(k + "=" + v);
  env["ZL_CAPABILITIES"] = text::join(caps, ";");
  env["ZL_TIMER"] = plan.timer;
  env["ZL_TIMER_FALLBACK"] = plan.timer_fallback;
  add_device_env(env, backend, r.device);  // ABI 1.2 peaks and state (device_facts.hpp)
  for (const auto& [k, v] : o.knobs) env[k] = v;
  // Cold clears this many bytes (at least; the timer writes twice as many)
  // before each call; resolve refused a cold device without it.
  if (env[kL2Knob] == "cold") env[kL2BytesEnv] = std::to_string(l2_cache_bytes(r.device).value_or(0));
  for (const auto& [k, v] : caches.autotune.child_env) env[k] = v;
  // Always said, so that a value inherited from zlcore's environment never
  // turns an ordinary run into one whose winners go untuned.
  env["ZL_COMPILE_ONLY"] = o.compile_only ? "1" : "0";
  if (o.compile_only) {
    // The tuning calls it answers unbenchmarked must not become anyone's
    // winners: LibTuner keeps this run's in memory, and Triton's autotuners
    // keep theirs off the disk cache.
    for (const auto& [k, v] : compile_only_env()) env[k] = v;
  }
  if (caches.dirs.isolated) {
    env[FlagGemsProvider::tuner_cache_env()] = caches.dirs.flaggems;
    env["TRITON_CACHE_DIR"] = caches.dirs.triton;
    env["ZL_ISOLATE_TUNER_CACHE"] = "1";
  }
  return c;
}

}  // namespace zl::run_stage
