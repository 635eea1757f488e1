// Preflight: every check that would otherwise surface as a confusing pytest
// error after ~10 s of imports (a wrong path becomes "unrecognized arguments:
// --level core" from pytest) fails here, in milliseconds, with its name.
#include <yaml-cpp/yaml.h>

#include <filesystem>

#include "../util/file_kind.hpp"
#include "zlcore/errors.hpp"
#include "zlcore/run.hpp"

namespace zl {
namespace fs = std::filesystem;

namespace {

// FlagGems reads a shape file as a mapping of benchmark names to their
// shapes; anything else fails inside pytest, once per test, after the imports.
void check_shape_file(const std::string& file) {
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) {
    throw PreflightError("shape_file", file + " is not a file (--shape-file / SHAPE_FILE)");
  }
  YAML::Node doc;
  std::string text;
  try {
    // The shared reader: no wait on a FIFO swapped in, no read without end.
    text = read_regular_file(file);
  } catch (const std::exception& e) {
    throw PreflightError("shape_file", std::string(e.what()) + " (--shape-file / SHAPE_FILE)");
  }
  try {
    doc = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    std::string why = e.what();
    for (char& c : why) {
      if (c == '\n') c = ' ';
    }
    throw PreflightError("shape_file", file + " is not valid YAML: " + why);
  }
  if (!doc.IsMap() || doc.size() == 0) {
    throw PreflightError("shape_file", file +
                                           " holds no shapes: expected a mapping of benchmark names to their shapes, "
                                           "as in the suite's benchmark/core_shapes.yaml");
  }
}

}  // namespace

void preflight(const FlagGemsProvider& provider, const TestTarget& target, const RunOptions& opts) {
  std::error_code ec;
  const fs::path root(provider.root());
  if (!fs::is_directory(root, ec)) {
    throw PreflightError("flaggems_dir", root.string() + " is not a directory (--flaggems-dir / FLAGGEMS_DIR)");
  }
  provider.check_layout(!opts.dtypes.empty(), opts.shape_mode == "file");
  for (const std::string& rel : target.files) {
    const std::string file = provider.file_path(rel);
    if (!fs::is_regular_file(file, ec)) {
      throw PreflightError("benchmark_file", file + " does not exist (" + target.display() + ")");
    }
  }
  if (opts.shape_mode == "file") check_shape_file(opts.shape_file);
  if (!opts.replay_from.empty()) {
    fs::path r(opts.replay_from);
    bool ok =
        fs::is_directory(r / "autotune_records", ec) || (fs::is_directory(r, ec) && r.filename() == "autotune_records");
    if (!ok) {
      throw PreflightError("replay_from", r.string() +
                                              " is neither a run directory with autotune_records/ nor an "
                                              "autotune_records directory (--replay-from / REPLAY_FROM); record "
                                              "winners with a run of --isolate-tuner-cache 1 (or --autotune "
                                              "record) and replay from its directory");
    }
  }
}

}  // namespace zl
