// `zlcore batch`: many operators over the devices of one host, one run per
// operator, each outcome appended to ops_status.csv as it lands.
//
// The pieces, each in its own file under core/src/batch/:
//   device_list   --devices / --gpus text -> device indices
//   op_list       --ops, --ops-file (text or YAML) -> OpSpec list
//   outcome       a finished run (exit status + run_identity.json) -> a row
//   cold_executor Executor that runs one op as a child `zlcore run`
//   warm_executor Executor whose ops' pytest runs in a warm worker per device
//   lease         an op in flight, on disk, so --resume finds it after a kill
//   scheduler     the work queue over devices: idle check, timeouts, SIGINT
//   progress      the progress line, plain event lines, the summary table
//   local_launcher the whole batch on this host (batch_run.hpp: directory,
//                  resume, orphans, passes, op events, batch_identity.json)
//   launcher_registry  --launcher NAME -> a Launcher (local, slurm)
//   slurm_launcher the batch sharded over a Slurm cluster (job array + merge;
//                  its parts: slurm.hpp)
// ops_status.csv's rows and statuses are zlcore/ops_status.hpp (core/src/records).
#pragma once

#include <sys/types.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "zlcore/backend.hpp"
#include "zlcore/ops_status.hpp"
#include "zlcore/suite_index.hpp"
#include "zlcore/time_breakdown.hpp"

namespace zl::batch {

// ---- inputs ---------------------------------------------------------------

// "all", or indices and ranges ("0,2-3"). Throws UsageError naming `what`
// on a duplicate, a bad token or an index not in `valid` (listing `valid`).
std::vector<int> parse_device_list(const std::string& spec, const std::vector<int>& valid, const std::string& what);

// One operator to run. Either `op` (a mark of the suite, resolved by
// `zlcore run --op` through the suite index) or a pytest node (`--test-node`);
// per-op dtypes and shape file override the batch's.
struct OpSpec {
  std::string name;       // the key: ops_status.csv's `op`, runs/<dir_name>
  std::string op;         // FlagGems op name (a mark); empty when only a node is given
  std::string op_file;    // with op: run that mark from this file (--op-file)
  std::string test_node;  // empty: run resolves it from `op`
  std::vector<std::string> dtypes;
  std::string shape_file;  // absolute, or empty
  // Not an op yet: every mark of the suite (--ops all) or a benchmark file
  // (every mark it holds), replaced by expand_ops() once the suite is known.
  enum class Expand { none, all, file } expand = Expand::none;
};

// "a,b,c" (empty items ignored). The whole value `all`, and words naming a .py
// file (no "::"), are placeholders that expand_ops() turns into the suite's
// marks. Elsewhere (`abs,all`, an ops file's line) `all` is the op of that
// name: FlagGems has one.
std::vector<OpSpec> parse_ops_flag(const std::string& list);
// One op (or test node) per line, '#' starts a comment.
std::vector<OpSpec> parse_ops_text(const std::string& text);
// `ops:` (or a top-level list) of names or maps {name, node, dtypes,
// shape_file}; relative shape files resolve against `base_dir`.
std::vector<OpSpec> parse_ops_yaml(const std::string& text, const std::string& base_dir);
// By extension: .yaml/.yml as YAML, anything else as text. Rejects
// duplicate names and an empty list. Throws UsageError naming the file.
std::vector<OpSpec> load_ops_file(const std::string& path);
// Rejects duplicates and an empty list (`what` names the input).
void check_ops(const std::vector<OpSpec>& ops, const std::string& what);
// The ops of `--ops LIST` or `--ops-file F`, whichever `command` was given
// (null: absent); neither or both is a UsageError prefixed with `command`.
std::vector<OpSpec> ops_from_flags(const std::string* ops_flag, const std::string* ops_file,
                                   const std::string& command);
// True when some entry is `all` or a file still to expand.
bool needs_expansion(const std::vector<OpSpec>& ops);
// Replaces `all` by every mark of the index and a file by each mark it holds
// (that mark then runs from that file), keeping the entry's dtypes and shape
// file. A mark already listed is not added twice. Throws UsageError for a
// file that marks no op.
std::vector<OpSpec> expand_ops(const std::vector<OpSpec>& ops, const SuiteIndex& index, const std::string& suite_root);
// A file-system-safe directory name for an op ("a/b::c" -> "a_b__c").
std::string op_dir_name(const std::string& name);
// The replay source for one op when --replay-from names `from`: the op's run
// in a local batch (runs/<op>) or in a Slurm batch (shards/<i>/runs/<op>), else
// `from` itself (a run directory, or records; run's preflight judges it).
std::string replay_source_for(const std::string& from, const std::string& op_name);

// ---- execution ------------------------------------------------------------

// Everything one op's execution needs.
struct OpLaunch {
  OpSpec op;
  Device device;
  std::string run_dir;                // absolute; must not exist yet
  std::string log_path;               // the child's stdout+stderr
  std::string warmed_on;              // device id, when a warm-up pass ran it before
  double timeout_s = 0;               // 0: none
  std::vector<std::string> run_args;  // more `zlcore run` flags (the warm executor's worker socket)
};

// What is known once an op's execution is over.
struct OpOutcome {
  Status status = Status::crashed;
  int exit_code = -1;
  int signal = 0;
  std::string reason;
  // From the run's identity when it wrote one.
  std::string test_node, timer, bench_level, started, device_id;
  double seconds = 0;
  int attempts = 1;        // 2: the executor ran it again in a fresh process
  bool disk_full = false;  // a write of the run's found no space left (docs/batch.md, "Full disk")
  TimeBreakdown time;      // the identity's time.* (unknown when it has none)
};

// One op in flight. The scheduler polls it; it never blocks.
class Execution {
 public:
  virtual ~Execution() = default;
  virtual int output_fd() const = 0;          // for poll(); -1 when none
  virtual int exit_fd() const { return -1; }  // readable once it is over; -1 when none
  virtual void pump() = 0;                    // move available output to the log
  virtual bool poll_done() = 0;               // true once it is over
  virtual double elapsed() const = 0;
  // The process that runs the op (its `zlcore run`, leader of the op's
  // process group), for the op's lease; -1 when there is none. It may change
  // while the op is in flight (a rerun in a fresh process).
  virtual pid_t pid() const { return -1; }
  // Ask it to stop (SIGINT to the whole op) / stop it now (SIGKILL).
  virtual void interrupt() = 0;
  virtual void kill(bool as_timeout) = 0;
  // Valid after poll_done(); `interrupted` says the batch asked it to stop.
  virtual OpOutcome outcome(bool interrupted) = 0;
};

// How one op is executed: today a cold child `zlcore run` per op.
class Executor {
 public:
  virtual ~Executor() = default;
  virtual const char* kind() const = 0;
  // nullptr with `error` set when it could not start.
  virtual std::unique_ptr<Execution> start(const OpLaunch& launch, std::string* error) = 0;
  // True while the executor keeps a process of its own resident on the device
  // between ops (a warm worker): the memory that process holds is ours, so the
  // idle check must not count it as somebody else's.
  virtual bool holds_device(int /*device_index*/) const { return false; }
};

// The `zlcore run` flags every op of a batch gets (only the ones given; the
// rest the child reads from the environment as usual). Not zl::RunOptions,
// which is one run's parsed options.
struct OpRunFlags {
  std::vector<std::pair<std::string, std::string>> flags;  // {"--level", "core"}, ...; a switch has value ""
  std::vector<std::string> dtypes;                         // batch-wide; an op's own win
  std::string replay_from;                                 // a run dir or a batch dir
};

struct ColdExecutorConfig {
  std::string zlcore_exe;   // the binary to run (our own)
  std::string backend_dir;  // passed as --backend-dir
  std::string backend;      // --backend
  std::string batch_dir;    // --batch-dir
  OpRunFlags run;
  // Set for every `zlcore run` child and, warm, for the worker before its
  // imports (an A/B side's own variables and tuner cache directories).
  std::map<std::string, std::string> env_set;
};
std::unique_ptr<Executor> make_cold_executor(ColdExecutorConfig config);

// The default executor: still one `zlcore run` per op (preflight, run dir,
// identity, harvest stay there), but its pytest runs in a warm worker per
// device that imported torch/triton/flag_gems once (docs/warm-workers.md). A
// worker that crashes or is killed costs the op in flight; the next op on
// that device gets a fresh one.
struct WarmExecutorConfig {
  ColdExecutorConfig run;                   // how each op's `zlcore run` is started
  std::string python = "python3";           // the worker's interpreter (--python)
  std::string suite_root;                   // the worker's cwd (--flaggems-dir / FLAGGEMS_DIR)
  std::vector<std::string> visibility_env;  // set to the device's value before any import
  std::string framework_vendor;             // GEMS_VENDOR, read by flag_gems at import
  // An op whose worker died under it (or was unhealthy after it) runs once
  // more in a fresh process (batch). false: its outcome stands, the worker is
  // replaced, and the caller retries as it sees fit (ab reruns the whole
  // round on every side, so no round pairs a cold side with warm ones).
  bool rerun_cold = true;
  // From a device's second op on, a second worker imports what touches no
  // device and waits; a retired worker's successor is then that standby.
  bool standby = false;
  // Put before its workers' log names (workers/<prefix>device0-1.log): the
  // compile-ahead pass runs one executor per lane on one device.
  std::string log_prefix;
};
std::unique_ptr<Executor> make_warm_executor(WarmExecutorConfig config);

// ---- the batch ------------------------------------------------------------

// Lanes when --compile-ahead is not given: half the cores this process may
// use, at most 8; fewer than 2 is none (one lane only moves the compiling
// in front of the timed pass).
int auto_compile_lanes();

// The most the counts below may be: what the flags take, and a plan too.
constexpr int kMaxIdleUtilPercent = 100;
constexpr int64_t kMaxIdleMemMib = int64_t{1} << 40;  // a device of 1 EiB
constexpr int kMaxWarmupDevices = 4096;
constexpr int kMaxCompileLanes = 64;

struct IdlePolicy {
  bool check = true;
  int max_util_percent = 10;
  int64_t max_mem_used_mib = 2048;
  double recheck_s = 5;    // a busy device is asked again after this
  double give_up_s = 600;  // no idle device for this long: the rest are skipped
};

struct BatchOptions {
  std::string backend;
  std::string backend_dir;
  std::vector<int> device_indices;
  std::vector<OpSpec> ops;
  std::string out_dir;
  bool resume = false;
  double timeout_s = 0;
  double backstop_s = 15;  // after timeout_s, the batch itself kills the op
  int warmup_devices = 0;  // PARALLEL_WARMUP_GPUS
  // The compile-ahead pass (docs/batch.md, "Compiling ahead"): ops compiled
  // this many at a time before the timed pass; 0: none.
  int compile_lanes = 0;
  std::string compile_lanes_from = "default";  // the flag that decided it, auto, or default (off)
  bool cold = false;                           // --cold: a fresh process per op instead of warm workers
  // A standby worker per device waits, imported, to replace a retired one
  // (ZL_WORKER_STANDBY; docs/warm-workers.md, "The standby worker").
  bool standby = false;
  // What --resume does with an op an earlier batch (killed) left running:
  // "wait" for it and record what it measured, or "kill" its process group.
  std::string orphans = "wait";
  IdlePolicy idle;
  OpRunFlags run;
  std::map<std::string, std::string> recorded_options;  // for batch_identity.json
  // Every setting that changes numbers, resolved (flag over variable over
  // default): --resume compares it with the batch's first invocation and
  // refuses a difference unless force_resume.
  std::map<std::string, std::string> caliber;
  bool force_resume = false;
  // A launcher's own flags, by name without "--" ("partition" -> "gpu"); a
  // switch is present with value "1". The core only carries them, so a new
  // launcher needs no new field here.
  std::map<std::string, std::string> launcher_options;
  std::vector<std::string> launcher_args;  // repeated pass-through (--sbatch-arg)
};

// Where the batch runs: this host (local), or a cluster that runs shards of
// it as `zlcore batch --plan FILE --shard i` per node (slurm).
class Launcher {
 public:
  virtual ~Launcher() = default;
  virtual const char* name() const = 0;
  // false: the batch runs elsewhere, so this host's devices are not asked
  // (a login node may have none); `--devices` then does not apply.
  virtual bool uses_local_devices(const BatchOptions& options) const {
    (void)options;
    return true;
  }
  // Runs the whole batch; returns the exit code (0: every op passed).
  virtual int launch(const BatchOptions& options, const Backend& backend) = 0;
};
std::unique_ptr<Launcher> make_local_launcher();
std::unique_ptr<Launcher> make_slurm_launcher();
// The registry: nullptr for a name it does not know.
std::unique_ptr<Launcher> make_launcher(const std::string& name);
std::vector<std::string> launcher_names();

}  // namespace zl::batch
