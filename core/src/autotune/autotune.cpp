#include "zlcore/autotune.hpp"

#include <filesystem>

#include "zlcore/errors.hpp"

namespace zl {
namespace fs = std::filesystem;

AutotuneSetup prepare_autotune(const std::string& requested_mode, const std::string& replay_from, bool /*force*/,
                               const CacheDirs& dirs, const std::string& run_dir) {
  AutotuneSetup s;
  s.mode = requested_mode;
  if (s.mode.empty()) s.mode = !replay_from.empty() ? "replay" : (dirs.isolated ? "record" : "tune");
  if (s.mode != "tune" && s.mode != "record" && s.mode != "replay") {
    throw UsageError("--autotune must be tune, record or replay, not '" + s.mode + "'");
  }
  if (s.mode == "replay" && replay_from.empty()) {
    throw UsageError("--autotune replay needs --replay-from / REPLAY_FROM");
  }
  if (s.mode != "replay" && !replay_from.empty()) {
    throw UsageError("--replay-from / REPLAY_FROM implies --autotune replay, not '" + s.mode + "'");
  }
  s.child_env["ZL_AUTOTUNE_MODE"] = s.mode;
  if (s.mode == "record") {
    s.child_env["ZL_AUTOTUNE_RECORD_DIR"] = (fs::path(run_dir) / "autotune_records").string();
  }
  if (s.mode == "replay") {
    fs::path r(replay_from);
    s.records_dir = (r.filename() == "autotune_records" ? r : r / "autotune_records").string();
    s.child_env["ZL_REPLAY_RECORDS"] = s.records_dir;
  }
  return s;
}

AutotuneResult finish_autotune(const AutotuneSetup&, const CacheDirs&, const CacheSnapshot&, const std::string&) {
  return {};
}

}  // namespace zl
