// The FlagGems provider: everything zlcore knows about FlagGems' benchmark
// suite (and suites laid out like it) lives behind this one interface, so
// the rest of the core deals in a test target and a pytest argument list.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "zlcore/suite_index.hpp"

namespace zl {

struct TargetRequest {
  std::string op;         // --op / OP
  std::string op_file;    // --op-file / OP_FILE
  std::string test_node;  // --test-node / TEST_NODE
};

struct TestTarget {
  std::string op;                  // operator name (the mark); for a bare node or file, a name derived from it
  std::vector<std::string> files;  // the benchmark files, relative to the suite root when inside it
  std::string node;                // an exact pytest node id; empty: the files (with -m marker)
  std::string marker;              // `-m` value; empty: none
  // Other files that mark the op but do not run (its home file wins: a
  // parallel or variant file may mark it too). Recorded in the identity.
  std::vector<std::string> also_marked_in;
  // --op-file alone: every op the file marks, each recorded under its name.
  std::vector<std::string> marks;
  // What pytest selects: the node, or the files (space separated).
  std::string selection() const;
  std::string display() const;
};

struct GitInfo {
  std::optional<std::string> sha;
  std::optional<bool> dirty;
  std::string note;  // why sha/dirty are unknown
};

struct BenchArgs {
  std::string level;                // core | comprehensive
  std::string mode;                 // kernel | operator | wrapper | cudagraph
  std::vector<std::string> dtypes;  // empty: the op's own list
  std::string shape_file;           // empty: the suite's own
};

class FlagGemsProvider {
 public:
  explicit FlagGemsProvider(std::string root);
  const std::string& root() const { return root_; }

  // Resolves TEST_NODE directly; OP through the suite index to the file(s)
  // that mark it (its home benchmark/test_<op>.py first) plus `-m OP`; OP_FILE
  // alone to that file and every op it marks. Throws UsageError when nothing
  // is given, OP is not a mark name, or TEST_NODE lies in no file of OP (or
  // not in OP_FILE), and PreflightError(benchmark_file)
  // naming the closest marks when no file marks OP (or OP_FILE does not).
  TestTarget resolve(const TargetRequest& req) const;
  // The suite's op index, built (or read from zlcore's cache) on first use.
  const SuiteIndex& index() const;
  // The suite's benchmark directory, relative to the root.
  static const char* bench_dir();
  // A benchmark-file failure message that means "this op has no kernel for
  // the dtype (or level) asked for": FlagGems declines, nothing is broken.
  static bool is_decline(const std::string& message);
  // Op names are pytest marks: letters, digits and '_', 1-200 bytes.
  static bool valid_op_name(const std::string& name);
  // benchmark/core_shapes.yaml under the root.
  std::string default_shape_file() const;
  // Absolute path of a target file.
  std::string file_path(const std::string& file) const;
  // pytest arguments after the plugins: the node, -m, and FlagGems' options.
  std::vector<std::string> pytest_args(const TestTarget& t, const BenchArgs& a) const;
  // HEAD and the dirty flag when the root is a git checkout.
  GitInfo git_info() const;

  // FlagGems' conventions that the core's run set-up needs, named here so
  // that no other part of the core spells them: the variable that tells
  // FlagGems its vendor, the variable and default of its tuner cache
  // directory, and the subdirectory holding LibTuner's SQLite DBs.
  static const char* vendor_env() { return "GEMS_VENDOR"; }
  static const char* tuner_cache_env() { return "FLAGGEMS_CACHE_DIR"; }
  static std::string default_tuner_cache_dir(const std::string& home) { return home + "/.flaggems"; }
  static const char* tuner_db_subdir() { return "config_cache"; }
  // The variable that replaces LibTuner's whole database URL, and the URL
  // that keeps a process's winners in memory (read at flag_gems' import).
  static const char* tuner_db_url_env() { return "FLAGGEMS_DB_URL"; }
  static const char* tuner_db_in_memory() { return "sqlite:///:memory:"; }
  // Older FlagGems keep LibTuner's rows in sqlite3 directly and ignore the
  // URL; this switch turns that store's disk off.
  static const char* tuner_disk_cache_env() { return "FLAGGEMS_ENABLE_DISK_CACHE"; }
  // Prefixes of the environment variables that change what FlagGems and the
  // Triton under it compute or how they tune: the identity records them.
  static const std::vector<std::string>& knob_prefixes();

  static const std::vector<std::string>& modes();
  static const std::vector<std::string>& levels();
  // The names FlagGems' --dtypes takes (benchmark/conftest.py's choices):
  // any other word is pytest's multi-line usage error after the imports.
  static const std::vector<std::string>& dtype_names();
  // Whether the root is laid out like FlagGems' suite: benchmark/ with a
  // conftest.py that registers the options zlcore passes (--level, --mode,
  // and --dtypes / --shape_file when given). Throws PreflightError
  // (flaggems_dir) saying what is missing and where to point instead.
  void check_layout(bool dtypes, bool shape_file) const;

 private:
  std::string relative_file(const std::string& file) const;

  std::string root_;
  mutable std::shared_ptr<SuiteIndex> index_;
};

}  // namespace zl
