// Stages `prepare_caches` and `archive_shapes`: what the child will find on
// disk, recorded before it starts.
#include <filesystem>

#include "stages.hpp"
#include "zlcore/atomic_file.hpp"
#include "zlcore/sha256.hpp"

namespace zl::run_stage {

namespace fs = std::filesystem;

Caches prepare_caches(const RunOptions& o, const std::string& run_dir) {
  Caches c;
  // A replay gets an isolated cache: winners or binaries another run left in
  // a shared one must not leak in (docs/autotune.md). Unless the caller owns
  // the cache in use and asked to replay into it (--replay-in-cache).
  const bool replays = autotune_replays(o.autotune_mode, o.replay_from);
  c.dirs = resolve_cache_dirs(o.isolate_tuner_cache || (replays && !o.replay_in_cache), run_dir);
  if (c.dirs.isolated) {
    fs::create_directories(c.dirs.flaggems);
    fs::create_directories(c.dirs.triton);
  }
  // Before the snapshot: a replay's cache starts with the recorded winners.
  c.autotune = prepare_autotune(o.autotune_mode, o.replay_from, o.force_replay, c.dirs, run_dir, o.replay_in_cache);
  c.before = snapshot_cache(c.dirs);
  return c;
}

Shapes archive_shapes(const Resolved& r, const std::string& run_dir) {
  const RunOptions& o = r.options;
  Shapes s;
  s.source = o.shape_mode == "file" ? o.shape_file : r.provider.default_shape_file();
  std::string text;
  try {
    text = read_file(s.source);
    s.sha256 = sha256_hex(text);
  } catch (const std::exception&) {
    text = "# the suite has no " + s.source + "; shapes come from the benchmark code\n";
  }
  write_file_atomic((fs::path(run_dir) / "shapes.yaml").string(),
                    "bench_level: " + o.level + "\n# source: " + s.source + "\n" + text);
  return s;
}

}  // namespace zl::run_stage
