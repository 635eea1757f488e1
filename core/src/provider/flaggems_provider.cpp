// FlagGems specifics, in one file: its benchmark layout (benchmark/test_<op>.py
// with the op as a pytest marker), its options (--level, --mode, --dtypes,
// --shape_file), its default shape file, and how to tell its git revision.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "../util/text.hpp"
#include "zlcore/atomic_file.hpp"
#include "zlcore/errors.hpp"
#include "zlcore/paths.hpp"
#include "zlcore/process.hpp"
#include "zlcore/provider.hpp"

namespace zl {
namespace {

namespace fs = std::filesystem;

const char* kBenchDir = "benchmark";

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

std::string TestTarget::selection() const {
  if (!node.empty()) return node;
  std::string out;
  for (const std::string& f : files) out += (out.empty() ? "" : " ") + f;
  return out;
}

std::string TestTarget::display() const { return marker.empty() ? selection() : selection() + " -m " + marker; }

FlagGemsProvider::FlagGemsProvider(std::string root) : root_(std::move(root)) {}

const char* FlagGemsProvider::bench_dir() { return kBenchDir; }

const std::vector<std::string>& FlagGemsProvider::knob_prefixes() {
  static const std::vector<std::string> prefixes = {"TRITON_", "GEMS_", "FLAGGEMS_", "USE_FLAGTUNE", "FLAGTUNE_"};
  return prefixes;
}

const std::vector<std::string>& FlagGemsProvider::modes() {
  static const std::vector<std::string> m{"kernel", "operator", "wrapper", "cudagraph"};
  return m;
}

const std::vector<std::string>& FlagGemsProvider::levels() {
  static const std::vector<std::string> l{"core", "comprehensive"};
  return l;
}

const std::vector<std::string>& FlagGemsProvider::dtype_names() {
  static const std::vector<std::string> d{"float16", "float32", "bfloat16", "int16", "int32", "bool", "complex64"};
  return d;
}

namespace {

// Whether `text` (a conftest.py) names `option` as a quoted string, as an
// addoption call does.
bool registers(const std::string& text, const std::string& option) {
  return text.find('"' + option + '"') != std::string::npos || text.find('\'' + option + '\'') != std::string::npos;
}

}  // namespace

void FlagGemsProvider::check_layout(bool dtypes, bool shape_file) const {
  std::error_code ec;
  const fs::path root(root_);
  const fs::path bench = root / kBenchDir;
  const std::string point = "point --flaggems-dir at a FlagGems checkout root (the directory that holds benchmark/)";
  if (!fs::is_directory(bench, ec)) {
    // Given benchmark/ itself: its parent is the root FlagGems' layout means.
    const bool inside = root.filename() == kBenchDir && fs::is_regular_file(root / "conftest.py", ec);
    throw PreflightError("flaggems_dir", bench.string() + " does not exist: " +
                                             (inside ? "did you mean --flaggems-dir " + root.parent_path().string() +
                                                           "? --flaggems-dir is the checkout root, not its benchmark/"
                                                     : point));
  }
  const fs::path conftest = bench / "conftest.py";
  std::vector<std::string> missing;
  const std::string text = fs::is_regular_file(conftest, ec) ? slurp(conftest) : "";
  std::vector<std::string> needed{"--level", "--mode"};
  if (dtypes) needed.emplace_back("--dtypes");
  if (shape_file) needed.emplace_back("--shape_file");
  for (const std::string& option : needed) {
    if (!registers(text, option)) missing.push_back(option);
  }
  if (missing.empty()) return;
  throw PreflightError("flaggems_dir",
                       root_ + " is not a FlagGems-layout suite: " + conftest.string() +
                           (text.empty() ? " is missing or empty, so nothing registers " : " does not register ") +
                           text::join(missing) + ", the FlagGems options zlcore passes to pytest; " + point);
}

bool FlagGemsProvider::is_decline(const std::string& message) {
  // benchmark/base.py, Benchmark.set_dtypes: "Given dtype(s) 'torch.float16'"
  // "can't be supported by this op 'special_bessel_j1'" (no space between).
  return message.find("can't be supported by this op") != std::string::npos;
}

bool FlagGemsProvider::valid_op_name(const std::string& name) {
  if (name.empty() || name.size() > 200) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

const SuiteIndex& FlagGemsProvider::index() const {
  if (!index_) index_ = std::make_shared<SuiteIndex>(SuiteIndex::build(root_, kBenchDir, user_cache_dir()));
  return *index_;
}

std::string FlagGemsProvider::default_shape_file() const {
  return (fs::path(root_) / kBenchDir / "core_shapes.yaml").string();
}

std::string FlagGemsProvider::file_path(const std::string& file) const {
  fs::path f(file);
  return f.is_absolute() ? f.string() : (fs::path(root_) / f).string();
}

// A file as the index names it: relative to the root when inside it.
std::string FlagGemsProvider::relative_file(const std::string& file) const {
  fs::path f = fs::path(file).lexically_normal();
  if (!f.is_absolute()) return f.generic_string();
  const fs::path rel = f.lexically_relative(fs::path(root_).lexically_normal());
  if (!rel.empty() && *rel.begin() != "..") return rel.generic_string();
  return f.generic_string();
}

TestTarget FlagGemsProvider::resolve(const TargetRequest& req) const {
  TestTarget t;
  if (req.op.find(',') != std::string::npos) {
    throw UsageError("--op '" + req.op + "' names several ops, and a run times one: give one, or time them all with " +
                     "`zlcore batch --ops " + req.op + "`");
  }
  if (!req.op.empty() && !valid_op_name(req.op)) {
    throw UsageError("--op '" + req.op + "': an op is a pytest mark of the suite: letters, digits and '_', " +
                     "1-200 characters (zlcore ops lists them)");
  }
  if (!req.test_node.empty()) {
    t.node = req.test_node;
    t.files = {relative_file(req.test_node.substr(0, req.test_node.find("::")))};
    // With --op or --op-file the node must lie where they point: else the
    // run would measure one op and label it another.
    if (!req.op_file.empty() && relative_file(req.op_file) != t.files[0]) {
      throw UsageError("--test-node " + req.test_node + " is not in --op-file " + req.op_file +
                       " (or TEST_NODE / OP_FILE): give one of them");
    }
    if (!req.op.empty()) {
      const std::vector<std::string>& op_files = index().files_of(req.op);
      if (std::find(op_files.begin(), op_files.end(), t.files[0]) == op_files.end()) {
        const std::vector<std::string>& marks = index().marks_of(t.files[0]);
        throw UsageError(
            "--op " + req.op + " and --test-node " + req.test_node + " (or OP / TEST_NODE) disagree: " + t.files[0] +
            (marks.empty() ? " marks no op" : " marks " + text::join(marks)) + ", and " +
            (op_files.empty() ? "no file marks " + req.op : req.op + " is marked in " + text::join(op_files)) +
            "; give one of them");
      }
    }
    t.op = req.op;  // informative only: a node needs no marker
    if (t.op.empty()) {
      // A file that marks one op names the node after it; else FlagGems'
      // file name: benchmark/test_abs.py::test_abs -> abs.
      const std::vector<std::string>& marks = index().marks_of(t.files[0]);
      std::string stem = fs::path(t.files[0]).stem().string();
      t.op = marks.size() == 1 ? marks[0] : stem.rfind("test_", 0) == 0 ? stem.substr(5) : stem;
    }
    return t;
  }
  if (!req.op_file.empty() && req.op.empty()) {
    t.files = {relative_file(req.op_file)};
    t.marks = index().marks_of(t.files[0]);
    std::string stem = fs::path(t.files[0]).stem().string();
    t.op = t.marks.size() == 1 ? t.marks[0] : stem.rfind("test_", 0) == 0 ? stem.substr(5) : stem;
    return t;
  }
  if (req.op.empty()) {
    throw UsageError("no operator given: use --op/OP, --op-file/OP_FILE or --test-node/TEST_NODE");
  }
  t.op = req.op;
  t.marker = req.op;
  if (!req.op_file.empty()) {
    t.files = {relative_file(req.op_file)};
    const std::vector<std::string>& marks = index().marks_of(t.files[0]);
    // A file the index does not know (outside the suite) is pytest's to judge.
    if (!marks.empty() && std::find(marks.begin(), marks.end(), req.op) == marks.end()) {
      throw PreflightError("benchmark_file",
                           t.files[0] + " does not mark '" + req.op + "'; it marks: " + text::join(marks));
    }
    return t;
  }
  t.files = index().files_to_run(req.op, kBenchDir);
  if (!t.files.empty()) {
    for (const std::string& f : index().files_of(req.op)) {
      if (std::find(t.files.begin(), t.files.end(), f) == t.files.end()) t.also_marked_in.push_back(f);
    }
    return t;
  }
  const std::vector<std::string> near = index().closest(req.op, 5);
  throw PreflightError(
      "benchmark_file",
      "no file under " + (fs::path(root_) / kBenchDir).string() + " marks '" + req.op + "'" +
          (near.empty() ? std::string(" (zlcore ops lists every op)") : "; closest: " + text::join(near)));
}

std::vector<std::string> FlagGemsProvider::pytest_args(const TestTarget& t, const BenchArgs& a) const {
  std::vector<std::string> args;
  if (!t.node.empty()) {
    args.push_back(t.node);
  } else {
    args.insert(args.end(), t.files.begin(), t.files.end());
  }
  if (!t.marker.empty()) {
    args.push_back("-m");
    args.push_back(t.marker);
  }
  args.push_back("--level");
  args.push_back(a.level);
  args.push_back("--mode");
  args.push_back(a.mode);
  for (const std::string& d : a.dtypes) {
    args.push_back("--dtypes");
    args.push_back(d);
  }
  if (!a.shape_file.empty()) {
    args.push_back("--shape_file");
    args.push_back(a.shape_file);
  }
  return args;
}

GitInfo FlagGemsProvider::git_info() const {
  GitInfo info;
  fs::path git = fs::path(root_) / ".git";
  std::error_code ec;
  if (fs::is_regular_file(git, ec)) {  // a worktree: "gitdir: <path>"
    std::string line = text::trim_end(slurp(git), "\n\r ");
    if (line.rfind("gitdir: ", 0) == 0) git = fs::path(root_) / line.substr(8);
  }
  if (!fs::is_directory(git, ec)) {
    info.note = "not a git checkout";
    return info;
  }
  // HEAD read directly: a detached SHA, or a ref in refs/ or packed-refs.
  std::string head = text::trim_end(slurp(git / "HEAD"), "\n\r ");
  if (head.rfind("ref: ", 0) == 0) {
    std::string ref = head.substr(5);
    std::string sha = text::trim_end(slurp(git / ref), "\n\r ");
    if (sha.empty()) {
      std::istringstream packed(slurp(git / "packed-refs"));
      for (std::string line; std::getline(packed, line);) {
        if (line.size() > 41 && line.compare(41, std::string::npos, ref) == 0) sha = line.substr(0, 40);
      }
    }
    if (!sha.empty()) info.sha = sha;
  } else if (head.size() >= 40) {
    info.sha = head.substr(0, 40);
  }
  // The dirty flag needs git itself; without it the flag stays unknown.
  auto status = capture_output({"git", "-C", root_, "status", "--porcelain", "--untracked-files=no"}, "", 20);
  if (status) {
    info.dirty = !text::trim_end(*status, "\n\r ").empty();
  } else {
    info.note = "git status did not answer";
  }
  return info;
}

}  // namespace zl
