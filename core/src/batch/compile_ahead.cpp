#include "compile_ahead.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <set>

#include "../util/clock.hpp"
#include "zlcore/atomic_file.hpp"
#include "zlcore/bool_text.hpp"
#include "zlcore/sha256.hpp"

namespace fs = std::filesystem;

namespace zl::batch {

int auto_compile_lanes() {
  cpu_set_t set;
  CPU_ZERO(&set);
  int cores = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
  const int lanes = std::min(8, cores / 2);
  return lanes >= 2 ? lanes : 0;
}

std::string compile_ahead_refusal(const BatchOptions& o) {
  if (!o.run.replay_from.empty()) return "each replay fills a tuner cache of its own";
  // The flag over the variable, read as every run reads them (the batch
  // checked both before anything was written).
  std::optional<bool> isolate;
  if (const char* env = std::getenv("ZL_ISOLATE_TUNER_CACHE"); env != nullptr && *env != '\0')
    isolate = parse_bool(env);
  for (const auto& [flag, value] : o.run.flags) {
    if (flag == "--isolate-tuner-cache") isolate = parse_bool(value);
    if (flag == "--autotune" && value != "tune") return "--autotune " + value + " needs a tuner cache of its own";
  }
  if (isolate.value_or(false)) return "each run has a tuner cache of its own (--isolate-tuner-cache)";
  return "";
}

std::string suite_fingerprint(const std::string& root, const std::vector<std::string>& outputs) {
  // Each probe with an error code of its own: a failed one must neither
  // end the walk nor name the empty path every other failure returns.
  const auto canonical = [](const fs::path& p) {
    std::error_code e;
    fs::path c = fs::weakly_canonical(fs::absolute(p, e), e);
    return e ? fs::path() : c;
  };
  std::set<fs::path> skipped;
  for (const std::string& o : outputs) {
    if (fs::path c = canonical(o); !c.empty()) skipped.insert(c);
  }
  const auto written_by_zlcore = [&](const fs::path& dir) {
    std::error_code e;
    for (const char* id : {"run_identity.json", "batch_identity.json", "ab_identity.json"}) {
      if (fs::exists(dir / id, e)) return true;
    }
    const fs::path c = canonical(dir);
    return !c.empty() && skipped.count(c) > 0;
  };
  std::error_code ec;
  std::vector<std::string> lines;
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (it->is_directory(ec)) {
      if (name.empty() || name[0] == '.' || name == "__pycache__" || written_by_zlcore(it->path()))
        it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file(ec)) continue;
    const auto size = it->file_size(ec);
    const auto when = it->last_write_time(ec).time_since_epoch().count();
    lines.push_back(fs::relative(it->path(), root, ec).string() + "\t" + std::to_string(size) + "\t" +
                    std::to_string(when));
  }
  std::sort(lines.begin(), lines.end());
  std::string all;
  for (const std::string& l : lines) all += l + "\n";
  return sha256_hex(all);
}

namespace {

// Flags that change how a run measures, not which kernels its tests compile.
bool measures_only(const std::string& flag) {
  static const std::set<std::string> flags = {
      "--l2", "--profile", "--timer", "--direct-repeat", "--keep-tuner-cache", "--force-replay"};
  return flags.count(flag) > 0;
}

// A shape file as the batch's caliber names it: its content's hash.
std::string file_hash(const std::string& path) {
  try {
    return sha256_hex(read_file(path));
  } catch (const std::exception&) {
    return "(unreadable)";
  }
}

}  // namespace

std::string ready_key(const OpSpec& op, const OpRunFlags& run, const std::string& fingerprint) {
  std::string k = "op\t" + op.name + "\nmark\t" + op.op + "\nfile\t" + op.op_file + "\nnode\t" + op.test_node + "\n";
  for (const std::string& d : op.dtypes.empty() ? run.dtypes : op.dtypes) k += "dtype\t" + d + "\n";
  if (!op.shape_file.empty()) k += "shapes\t" + file_hash(op.shape_file) + "\n";
  for (const auto& [flag, value] : run.flags) {
    if (measures_only(flag)) continue;
    k += flag + "\t" + value + "\n";
    if (flag == "--shape-file") k += "shapes\t" + file_hash(value) + "\n";
  }
  // What a run reads from the environment when its flag is absent.
  for (const char* var : {"BENCH_LEVEL", "SHAPE_MODE", "SHAPE_FILE", "FLAGGEMS_DIR"}) {
    const char* v = std::getenv(var);
    if (v == nullptr) continue;
    k += std::string("env ") + var + "\t" + v + "\n";
    if (std::string(var) == "SHAPE_FILE" && *v != '\0') k += "shapes\t" + file_hash(v) + "\n";
  }
  k += "suite\t" + fingerprint + "\n";
  return sha256_hex(k);
}

std::string markers_refusal(const std::string& triton_dir) {
  const fs::path dir = fs::path(triton_dir) / "zlcore-compiled";
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (!ec && !fs::is_directory(dir, ec)) ec = std::make_error_code(std::errc::not_a_directory);
  if (!ec && ::access(dir.c_str(), W_OK | X_OK) != 0) ec = std::error_code(errno, std::generic_category());
  if (!ec) return "";
  return "cannot keep compile-ahead markers in " + dir.string() + " (" + ec.message() + ")";
}

bool is_compiled(const std::string& triton_dir, const std::string& key) {
  std::error_code ec;
  return fs::is_regular_file(fs::path(triton_dir) / "zlcore-compiled" / key, ec);
}

void mark_compiled(const std::string& triton_dir, const std::string& key, const std::string& op,
                   const std::string& batch_dir, std::string* error) {
  try {
    const fs::path dir = fs::path(triton_dir) / "zlcore-compiled";
    fs::create_directories(dir);
    write_file_atomic((dir / key).string(), "op\t" + op + "\nbatch\t" + batch_dir + "\nat\t" + utc_now_iso() + "\n");
  } catch (const std::exception& e) {
    *error = e.what();
  }
}

namespace {

class LaneExecution : public Execution {
 public:
  LaneExecution(std::unique_ptr<Execution> inner, bool* busy) : inner_(std::move(inner)), busy_(busy) {}
  ~LaneExecution() override { *busy_ = false; }
  int output_fd() const override { return inner_->output_fd(); }
  int exit_fd() const override { return inner_->exit_fd(); }
  void pump() override { inner_->pump(); }
  bool poll_done() override { return inner_->poll_done(); }
  double elapsed() const override { return inner_->elapsed(); }
  pid_t pid() const override { return inner_->pid(); }
  void interrupt() override { inner_->interrupt(); }
  void kill(bool as_timeout) override { inner_->kill(as_timeout); }
  OpOutcome outcome(bool interrupted) override { return inner_->outcome(interrupted); }

 private:
  std::unique_ptr<Execution> inner_;
  bool* busy_;
};

class LaneExecutor : public Executor {
 public:
  LaneExecutor(std::vector<std::unique_ptr<Executor>> lanes, std::vector<int> devices)
      : lanes_(std::move(lanes)), devices_(std::move(devices)), busy_(std::make_unique<bool[]>(lanes_.size())) {}
  const char* kind() const override { return lanes_.empty() ? "cold" : lanes_.front()->kind(); }

  std::unique_ptr<Execution> start(const OpLaunch& launch, std::string* error) override {
    for (size_t i = 0; i < lanes_.size(); ++i) {
      if (busy_[i] || (i < devices_.size() && devices_[i] != launch.device.index)) continue;
      std::unique_ptr<Execution> inner = lanes_[i]->start(launch, error);
      if (!inner) return nullptr;
      busy_[i] = true;
      return std::make_unique<LaneExecution>(std::move(inner), &busy_[i]);
    }
    *error = "every compile-ahead lane is busy";
    return nullptr;
  }
  // Lanes share a device by design; the pass does not ask whether it is idle.
  bool holds_device(int device_index) const override {
    return std::any_of(lanes_.begin(), lanes_.end(), [&](const auto& l) { return l->holds_device(device_index); });
  }

 private:
  std::vector<std::unique_ptr<Executor>> lanes_;
  std::vector<int> devices_;
  std::unique_ptr<bool[]> busy_;
};

}  // namespace

std::unique_ptr<Executor> make_lane_executor(std::vector<std::unique_ptr<Executor>> lanes, std::vector<int> devices) {
  return std::make_unique<LaneExecutor>(std::move(lanes), std::move(devices));
}

}  // namespace zl::batch
