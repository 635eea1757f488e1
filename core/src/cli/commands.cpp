#include "command.hpp"

namespace zl::cli {

int cmd_backends(Context&, const std::vector<std::string>&);
int cmd_devices(Context&, const std::vector<std::string>&);
int cmd_plan(Context&, const std::vector<std::string>&);
int cmd_compare(Context&, const std::vector<std::string>&);
int cmd_batch(Context&, const std::vector<std::string>&);
int cmd_run(Context&, const std::vector<std::string>&);
int cmd_ops(Context&, const std::vector<std::string>&);
int cmd_ab(Context&, const std::vector<std::string>&);
int cmd_history(Context&, const std::vector<std::string>&);

namespace {

// The variables of `run` that every op of a batch reads the same way.
const std::vector<std::string> kRunEnv = {
    "ZL_BACKEND              --backend",
    "FLAGGEMS_DIR            --flaggems-dir (unset: the embedded example suite)",
    "SHAPE_MODE, SHAPE_FILE  --shape-mode, --shape-file (SHAPE_FILE alone means file mode)",
    "BENCH_LEVEL             --level",
    "REPLAY_FROM             --replay-from",
    "ZL_ISOLATE_TUNER_CACHE  --isolate-tuner-cache (a boolean)",
    "ZL_ENABLE_CUDAGRAPH     --enable-cudagraph (a boolean)",
    "ZL_DIRECT_REPEAT        --direct-repeat",
    "ZL_L2                   --l2 (warm or cold)",
    "ZL_PROFILE              --profile (a boolean; docs/profile.md)",
    "FLAGGEMS_CACHE_DIR, TRITON_CACHE_DIR  the shared tuner caches",
    "TRITON_CACHE_AUTOTUNING  set to 1 in the child (autotune winners kept in TRITON_CACHE_DIR) unless already set",
    "<the backend's visibility variable>  already set: only the devices it names are used (zlcore backends shows "
    "the name)",
    "ZL_PLACEMENTS, ZL_PLACEMENT_*, ZL_GRAPH_*, ZL_HOST_*, ZL_CLUSTER_*, ZL_DIRECT_BUDGET_MS  timer settings read "
    "by the child (docs/cli.md)",
    "ZL_COMPILE_AHEAD        threads that compile an autotuner's configs before it benchmarks them (default none)",
};

std::vector<std::string> with(std::vector<std::string> head, const std::vector<std::string>& tail) {
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

}  // namespace

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"backends",
       "list loaded backends and rejected files",
       "[--json]",
       {"ZL_BACKEND_PATH  more backend directories (A:B) before the default one"},
       cmd_backends},
      {"devices",
       "list one backend's devices",
       "--backend B [--json]",
       {"ZL_BACKEND  --backend",
        "<the backend's visibility variable>  already set: the devices it leaves out are marked",
        "backend tool overrides (e.g. another vendor tool or a recorded output): docs/backends.md"},
       cmd_devices},
      {"plan",
       "show the pytest plugins and timer derived from a backend's capabilities",
       "--backend B [--json] [--timer T] [--enable-cudagraph BOOL] [--l2 cold|warm] [--profile]",
       {"ZL_BACKEND  --backend", "ZL_ENABLE_CUDAGRAPH  --enable-cudagraph (a boolean)", "ZL_L2  --l2 (warm or cold)",
        "ZL_PROFILE  --profile (a boolean)"},
       cmd_plan},
      {"compare",
       "compare two runs or batches: caliber check, speedup and verdict per shape",
       "A B [options]   (A, B: run or batch directories)\n"
       "       zlcore compare --calibrate A1 A2 [A3 ...] [options]",
       {},
       cmd_compare},
      {"batch", "run many ops over the devices of this host; resumable ops_status.csv",
       "--ops a,b,c | --ops-file F [options]",
       with(kRunEnv,
            {"PARALLEL_WARMUP_GPUS    --parallel-warmup-gpus",
             "ZL_WORKER_PREIMPORT     modules a warm worker imports once (default torch,triton,flag_gems)",
             "ZL_WORKER_STANDBY       auto (default: where the timer's clock is on the device), 1 or 0: a standby "
             "worker that waits, imported, to replace a retired one",
             "ZL_WORKER_STANDBY_PREIMPORT modules a standby imports while it waits (default torch,triton)",
             "ZL_WORKER_PROFILE       a directory: each warm op runs under cProfile and leaves its statistics there",
             "ZL_WARM_MEMORY_LIMIT_MB device memory (MiB) a warm worker may keep after an op (default 2048)",
             "ZL_WARM_MEMORY_MARGIN_MB device memory (MiB) a warm worker's allocation may stay over its baseline "
             "after an op (default 64)",
             "ZL_BATCH_HEARTBEAT_S    seconds between 'still running' lines when stdout is not a terminal (default 60)",
             "OP, OP_FILE, TEST_NODE  refused: they select one op of `run`; a batch names its ops with --ops"}),
       cmd_batch},
      {"run", "run one operator end to end into a run directory",
       "--op OP | --test-node NODE | --op-file F [options] [-- pytest args]",
       with({"OP, OP_FILE, TEST_NODE  --op, --op-file, --test-node",
             "ZL_CALIBER_ENV          more variables (comma-separated) the identity's env records (set by ab)"},
            kRunEnv),
       cmd_run},
      {"ops",
       "list the suite's operators (its pytest marks) and the files that mark them",
       "[--flaggems-dir DIR] [--json]",
       {"FLAGGEMS_DIR  --flaggems-dir (unset: the embedded example suite)"},
       cmd_ops},
      {"ab",
       "A/B of two FlagGems directories, sides interleaved round by round on each device; one report",
       "--a DIR --b DIR --ops a,b,c | --ops-file F --out DIR [options]",
       {"ZL_BACKEND  --backend", "BENCH_LEVEL  --level (read by every run)",
        "ZL_ENABLE_CUDAGRAPH  --enable-cudagraph (a boolean; read by every run)",
        "ZL_DIRECT_REPEAT  --direct-repeat (read by every run)", "ZL_L2  --l2 (warm or cold; given to every run)",
        "ZL_PROFILE  --profile (a boolean; given to every run)",
        "ZL_COMPILE_AHEAD  threads compiling an autotuner's configs before its benchmarks (read by every run)",
        "<the backend's visibility variable>  already set: only the devices it names are used"},
       cmd_ab},
      {"history",
       "a performance record across runs: import directories, report steps and what changed",
       "add DIR... [--db F]\n"
       "       zlcore history report [--db F] [--since DATE] [--op OP] [--format md|json|csv|html] "
       "[--fail-on-new-regression]",
       {"ZL_HISTORY_DB  --db"},
       cmd_history},
  };
  return table;
}

}  // namespace zl::cli
