// Preflight: every check that would otherwise surface as a confusing pytest
// error after ~10 s of imports (a wrong path becomes "unrecognized arguments:
// --level core" from pytest) fails here, in milliseconds, with its name.
#include <filesystem>

#include "zlcore/errors.hpp"
#include "zlcore/process.hpp"
#include "zlcore/run.hpp"

namespace zl {
namespace fs = std::filesystem;

std::string preflight(const FlagGemsProvider& provider, const TestTarget& target, const RunOptions& opts) {
  std::error_code ec;
  const fs::path root(provider.root());
  if (!fs::is_directory(root, ec)) {
    throw PreflightError("flaggems_dir", root.string() + " is not a directory (--flaggems-dir / FLAGGEMS_DIR)");
  }
  if (!fs::is_directory(root / "benchmark", ec)) {
    throw PreflightError("flaggems_dir", (root / "benchmark").string() +
                                             " does not exist: --flaggems-dir must be the FlagGems checkout root");
  }
  for (const std::string& rel : target.files) {
    const std::string file = provider.file_path(rel);
    if (!fs::is_regular_file(file, ec)) {
      throw PreflightError("benchmark_file", file + " does not exist (" + target.display() + ")");
    }
  }
  if (opts.shape_mode == "file" && !fs::is_regular_file(opts.shape_file, ec)) {
    throw PreflightError("shape_file", (opts.shape_file.empty() ? std::string("(none given)") : opts.shape_file) +
                                           " is not a file (SHAPE_MODE=file needs --shape-file / SHAPE_FILE)");
  }
  if (!opts.replay_from.empty()) {
    fs::path r(opts.replay_from);
    bool ok = fs::is_directory(r / "autotune_records", ec) ||
              (fs::is_directory(r, ec) && r.filename() == "autotune_records");
    if (!ok) {
      throw PreflightError("replay_from", r.string() + " is neither a run directory with autotune_records/ nor an "
                                                       "autotune_records directory (--replay-from / REPLAY_FROM)");
    }
  }
  // find_spec rather than import: it proves pytest is importable by this
  // interpreter at a fraction of the cost of importing it.
  auto out = capture_output({opts.python, "-c",
                             "import importlib.util,sys;"
                             "print('%d.%d.%d' % sys.version_info[:3]);"
                             "sys.exit(0 if importlib.util.find_spec('pytest') else 7)"},
                            "", 30);
  if (!out) {
    throw PreflightError("python", opts.python + " cannot run or cannot import pytest (--python)");
  }
  std::string version = *out;
  while (!version.empty() && (version.back() == '\n' || version.back() == '\r')) version.pop_back();
  return version;
}

}  // namespace zl
