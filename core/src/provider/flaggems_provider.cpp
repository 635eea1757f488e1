// FlagGems specifics, in one file: its benchmark layout (benchmark/test_<op>.py
// with the op as a pytest marker), its options (--level, --mode, --dtypes,
// --shape_file), its default shape file, and how to tell its git revision.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "zlcore/atomic_file.hpp"
#include "zlcore/errors.hpp"
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

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

std::string TestTarget::display() const { return marker.empty() ? node : node + " -m " + marker; }

FlagGemsProvider::FlagGemsProvider(std::string root) : root_(std::move(root)) {}

const std::vector<std::string>& FlagGemsProvider::modes() {
  static const std::vector<std::string> m{"kernel", "operator", "wrapper", "cudagraph"};
  return m;
}

const std::vector<std::string>& FlagGemsProvider::levels() {
  static const std::vector<std::string> l{"core", "comprehensive"};
  return l;
}

std::string FlagGemsProvider::default_shape_file() const {
  return (fs::path(root_) / kBenchDir / "core_shapes.yaml").string();
}

std::string FlagGemsProvider::file_path(const TestTarget& t) const {
  fs::path f(t.file);
  return f.is_absolute() ? f.string() : (fs::path(root_) / f).string();
}

TestTarget FlagGemsProvider::resolve(const TargetRequest& req) const {
  TestTarget t;
  if (!req.test_node.empty()) {
    t.node = req.test_node;
    t.file = req.test_node.substr(0, req.test_node.find("::"));
    t.op = req.op;  // informative only: a node needs no marker
    if (t.op.empty()) {
      // benchmark/test_abs.py::test_abs -> abs, the name FlagGems gives it.
      std::string stem = fs::path(t.file).stem().string();
      t.op = stem.rfind("test_", 0) == 0 ? stem.substr(5) : stem;
    }
    return t;
  }
  if (!req.op_file.empty() && req.op.empty()) {
    t.file = req.op_file;
    t.node = req.op_file;
    t.op = fs::path(req.op_file).stem().string();
    if (t.op.rfind("test_", 0) == 0) t.op = t.op.substr(5);
    return t;
  }
  if (req.op.empty()) {
    throw UsageError("no operator given: use --op/OP, --op-file/OP_FILE or --test-node/TEST_NODE");
  }
  t.op = req.op;
  t.marker = req.op;
  if (!req.op_file.empty()) {
    t.file = req.op_file;
    t.node = req.op_file;
    return t;
  }
  const std::string own = std::string(kBenchDir) + "/test_" + req.op + ".py";
  if (fs::is_regular_file(fs::path(root_) / own)) {
    t.file = own;
    t.node = own;
    return t;
  }
  // No file of its own: look for the marker, and for near names to suggest.
  std::vector<std::string> by_marker, by_name;
  const std::regex mark("@pytest\\.mark\\." + std::regex_replace(req.op, std::regex("[^A-Za-z0-9_]"), "") + "\\b");
  std::error_code ec;
  std::vector<fs::path> files;
  for (fs::directory_iterator it(fs::path(root_) / kBenchDir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind("test_", 0) == 0 && it->path().extension() == ".py") files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    const std::string rel = std::string(kBenchDir) + "/" + f.filename().string();
    if (std::regex_search(slurp(f), mark)) by_marker.push_back(rel);
    if (f.stem().string().find(req.op) != std::string::npos) by_name.push_back(rel);
  }
  if (by_marker.size() == 1) {
    t.file = by_marker[0];
    t.node = by_marker[0];
    return t;
  }
  if (by_marker.size() > 1) {
    throw PreflightError("benchmark_file", "op '" + req.op + "' is marked in several files: " + join(by_marker) +
                                               "; pick one with --op-file or --test-node");
  }
  std::string hint = by_name.empty() ? "no benchmark file names it" : "candidates: " + join(by_name);
  throw PreflightError("benchmark_file",
                       (fs::path(root_) / own).string() + " does not exist and no file marks '" + req.op + "'; " + hint);
}

std::vector<std::string> FlagGemsProvider::pytest_args(const TestTarget& t, const BenchArgs& a) const {
  std::vector<std::string> args{t.node};
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
    std::string line = trim(slurp(git));
    if (line.rfind("gitdir: ", 0) == 0) git = fs::path(root_) / line.substr(8);
  }
  if (!fs::is_directory(git, ec)) {
    info.note = "not a git checkout";
    return info;
  }
  // HEAD read directly: a detached SHA, or a ref in refs/ or packed-refs.
  std::string head = trim(slurp(git / "HEAD"));
  if (head.rfind("ref: ", 0) == 0) {
    std::string ref = head.substr(5);
    std::string sha = trim(slurp(git / ref));
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
    info.dirty = !trim(*status).empty();
  } else {
    info.note = "git status did not answer";
  }
  return info;
}

}  // namespace zl
