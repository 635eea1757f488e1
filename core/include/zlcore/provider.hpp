// The FlagGems provider: everything zlcore knows about FlagGems' benchmark
// suite (and suites laid out like it) lives behind this one interface, so
// the rest of the core deals in a test target and a pytest argument list.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace zl {

struct TargetRequest {
  std::string op;         // --op / OP
  std::string op_file;    // --op-file / OP_FILE
  std::string test_node;  // --test-node / TEST_NODE
};

struct TestTarget {
  std::string op;      // operator name (the marker); may be empty for a bare node
  std::string file;    // the benchmark file, relative to the suite root when it is inside it
  std::string node;    // what pytest is given: a node id or the file
  std::string marker;  // `-m` value; empty: none
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

  // Resolves TEST_NODE directly, else OP to benchmark/test_<op>.py (or
  // OP_FILE) plus the op's marker. An op with no file of its own is looked for
  // by marker across benchmark/test_*.py. Throws UsageError when nothing is
  // given and PreflightError(benchmark_file) listing candidates when the op is
  // absent or ambiguous.
  TestTarget resolve(const TargetRequest& req) const;
  // benchmark/core_shapes.yaml under the root.
  std::string default_shape_file() const;
  // Absolute path of the target's file.
  std::string file_path(const TestTarget& t) const;
  // pytest arguments after the plugins: the node, -m, and FlagGems' options.
  std::vector<std::string> pytest_args(const TestTarget& t, const BenchArgs& a) const;
  // HEAD and the dirty flag when the root is a git checkout.
  GitInfo git_info() const;

  static const std::vector<std::string>& modes();
  static const std::vector<std::string>& levels();

 private:
  std::string root_;
};

}  // namespace zl
