#include "batch_caliber.hpp"
#include "zlcore/provider.hpp"

#include <unistd.h>  // environ (glibc declares it under _GNU_SOURCE)
#include <cstring>
#include <filesystem>

#include "zlcore/atomic_file.hpp"
#include "zlcore/sha256.hpp"

namespace zl::cli {
namespace {

// The timers' settings (docs/cli.md, "Environment variables") and the
// framework knobs a run's identity records (TRITON_*, GEMS_*, FLAGGEMS_*,
// FLAGTUNE): a value set for one session and not the next changes numbers.
bool number_knob(const std::string& name) {
  static const char* const prefixes[] = {"ZL_GRAPH_",     "ZL_PLACEMENT", "ZL_HOST_REPEAT",     "ZL_HOST_LOOPS",
                                         "ZL_HOST_CLOCK", "ZL_CLUSTER_",  "ZL_DIRECT_BUDGET_MS"};
  // Where caches live changes no number (and differs per machine).
  if (name == "TRITON_CACHE_DIR" || name == FlagGemsProvider::tuner_cache_env() || name == "TRITON_HOME") return false;
  for (const char* p : prefixes) {
    if (name.rfind(p, 0) == 0) return true;
  }
  for (const std::string& p : FlagGemsProvider::knob_prefixes()) {
    if (name.rfind(p, 0) == 0) return true;
  }
  return false;
}

}  // namespace

std::map<std::string, std::string> batch_caliber(const Backend& backend, const Plan& plan, const RunOptions& checked,
                                                 const po::variables_map& vm) {
  namespace fs = std::filesystem;
  std::map<std::string, std::string> c;
  c["backend"] = backend.name();
  c["level"] = checked.level;
  c["mode"] = checked.mode;
  c["dtypes"] = vm.count("dtypes") ? vm["dtypes"].as<std::string>() : "(each op's own)";
  c["shape_mode"] = checked.shape_mode;
  if (checked.shape_mode == "file") {
    c["shape_file"] = fs::absolute(checked.shape_file).lexically_normal().string();
    try {
      c["shape_file_sha256"] = sha256_hex(read_file(checked.shape_file));
    } catch (const std::exception&) {
      c["shape_file_sha256"] = "(unreadable)";
    }
  }
  c["timer"] = plan.timer;
  const bool isolated = checked.isolate_tuner_cache;
  c["isolate_tuner_cache"] = isolated ? "1" : "0";
  c["autotune"] = !checked.autotune_mode.empty() ? checked.autotune_mode
                  : !checked.replay_from.empty() ? "replay"
                  : isolated                     ? "record"
                                                 : "tune";
  if (!checked.replay_from.empty()) c["replay_from"] = fs::absolute(checked.replay_from).lexically_normal().string();
  for (const auto& [k, v] : checked.knobs) {
    if (k == "ZL_ENABLE_CUDAGRAPH") c["enable_cudagraph"] = v;
    if (k == "ZL_DIRECT_REPEAT") c["direct_repeat"] = v;
    // Only cold: a batch begun before the policy existed (warm) resumes.
    if (k == kL2Knob && v == "cold") c["l2"] = v;
  }
  for (char** e = environ; *e != nullptr; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (eq == nullptr) continue;
    const std::string name(*e, static_cast<size_t>(eq - *e));
    if (number_knob(name)) c["env:" + name] = eq + 1;
  }
  return c;
}

}  // namespace zl::cli
