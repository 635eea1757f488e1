// The compile-ahead pass (compile_ahead.hpp; docs/batch.md, "Compiling
// ahead"): the ops still to run, each once as `zlcore run --compile-only`,
// `lanes` at a time, before anything is timed. Its runs give no op a row:
// one that fails only leaves its kernels to the timed run, as without the pass.
#include <algorithm>
#include <cstdio>

#include "../util/clock.hpp"
#include "../util/json.hpp"
#include "../util/json_read.hpp"
#include "../util/printable.hpp"
#include "batch_run.hpp"
#include "compile_ahead.hpp"
#include "zlcore/atomic_file.hpp"
#include "zlcore/autotune.hpp"
#include "zlcore/process.hpp"
#include "zlcore/provider.hpp"
#include "zlcore/signals.hpp"
#include "zlcore/tuner_cache.hpp"

namespace fs = std::filesystem;

namespace zl::batch {
namespace {

// An identity's whole number at a dotted path; -1 where it has none.
int64_t int_at(const rapidjson::Value& doc, const char* dotted) {
  const rapidjson::Value* v = json::at_path(doc, dotted);
  return v != nullptr && v->IsInt64() ? v->GetInt64() : -1;
}

// What a compile-only run's identity says against it: a run that passed
// without calling a side compiled nothing; one whose tuners wrote a winner
// to the shared LibTuner store (a FlagGems that ignored the in-memory URL)
// left an untuned winner there. Empty when nothing does.
std::string compile_doubt(const std::string& run_dir, Status status) {
  rapidjson::Document doc;
  try {
    if (!json::parse(doc, read_file(run_dir + "/run_identity.json")).empty() || !doc.IsObject())
      return "its identity does not read";
  } catch (const std::exception& e) {
    return std::string("its identity does not read: ") + e.what();
  }
  if (const int64_t added = int_at(doc, "tuner_cache.new_winners"); added > 0)
    return "it added " + std::to_string(added) + " winner(s) to the shared LibTuner store";
  if (status == Status::passed && int_at(doc, "plugins.timing.sides_compiled") <= 0)
    return "it called no side, so it compiled nothing";
  return "";
}

}  // namespace

// One executor per lane, each its own worker (or a fresh process per op
// with --cold), started for compile-only runs: LibTuner's store in memory,
// so that no winner chosen without a benchmark reaches the shared one.
std::unique_ptr<Executor> BatchRun::compile_executor(const std::vector<Device>& lanes) const {
  ColdExecutorConfig ec = cold_config();
  for (const auto& [k, v] : compile_only_env()) ec.env_set[k] = v;
  std::vector<std::unique_ptr<Executor>> executors;
  std::vector<int> devices;
  for (size_t i = 0; i < lanes.size(); ++i) {
    devices.push_back(lanes[i].index);
    if (o_.cold) {
      executors.push_back(make_cold_executor(ec));
      continue;
    }
    WarmExecutorConfig wc = warm_config(ec);
    wc.rerun_cold = false;  // a failed compile run is the timed run's to repeat
    wc.log_prefix = "compile" + std::to_string(i + 1) + "-";
    executors.push_back(make_warm_executor(wc));
  }
  return make_lane_executor(std::move(executors), std::move(devices));
}

// True when a Ctrl-C ended it, or came while it was being set up.
bool BatchRun::compile_ahead(const std::vector<Job>& jobs, QueueConfig qc) {
  const int interrupts = signals::interrupt_count();
  compile_.lanes = o_.compile_lanes;
  if (jobs.empty()) return false;
  if (compile_.lanes < 2) {
    if (o_.compile_lanes_from == "auto") {
      compile_.off = "auto: fewer than 4 cores, where compiling ahead only moves the compiling";
    } else if (o_.compile_lanes_from == "default") {
      compile_.off = "off by default (--compile-ahead N or auto turns it on)";
    } else if (compile_.lanes == 1) {
      compile_.off = "1 lane (" + o_.compile_lanes_from + ") compiles nothing beside another; 2 or more, or auto";
    } else {
      compile_.off = std::to_string(compile_.lanes) + " lanes (" + o_.compile_lanes_from + ")";
    }
    // Asked for and not run: said, as every other reason is.
    if (compile_.lanes == 1 || o_.compile_lanes_from == "auto") say("compile-ahead: off: " + compile_.off);
    return false;
  }
  if (const std::string why = compile_ahead_refusal(o_); !why.empty()) {
    compile_.off = why;
    say("compile-ahead: off: " + why);
    return false;
  }
  // Lanes on a device somebody else is using would slow what they time.
  if (const std::string busy = busy_device(qc); !busy.empty()) {
    compile_.off = busy;
    say("compile-ahead: off: " + busy);
    return false;
  }
  const CacheDirs caches = resolve_cache_dirs(false, "");
  compile_.triton_dir = caches.triton;
  // Where a marker cannot be left, a pass would compile again next time and
  // say nothing of it; its kernels' cache is suspect too.
  if (std::string why = markers_refusal(compile_.triton_dir); !why.empty()) {
    compile_.off = std::move(why);
    say("compile-ahead: off: " + compile_.off);
    return false;
  }
  const std::string root = warm_config(cold_config()).suite_root;
  // The device's name too: a Triton cache shared between machines holds
  // another architecture's kernels under the same op.
  std::string fingerprint =
      root.empty() ? "" : suite_fingerprint(root, {caches.triton, caches.flaggems, dir_.string()});
  for (const Device& d : devices_) fingerprint += "\t" + d.name;
  std::vector<Job> todo;
  for (const Job& j : jobs) {
    std::string key = ready_key(o_.ops[j.op_index], o_.run, fingerprint);
    if (is_compiled(compile_.triton_dir, key)) {
      ++compile_.already;
      continue;
    }
    compile_.keys[j.op_index] = key;
    todo.push_back(j);
  }
  if (todo.empty()) {
    say("compile-ahead: every op was compiled by an earlier batch into " + compile_.triton_dir);
    return false;
  }
  const size_t lanes = std::min<size_t>(static_cast<size_t>(compile_.lanes), todo.size());
  qc.devices.clear();
  for (size_t i = 0; i < lanes; ++i) qc.devices.push_back(devices_[i % devices_.size()]);
  for (const Device& d : qc.devices) {
    if (std::find(compile_.devices.begin(), compile_.devices.end(), d.id) == compile_.devices.end())
      compile_.devices.push_back(d.id);
  }
  // The lanes share a device on purpose, and nothing is timed meanwhile.
  qc.idle.check = false;
  compile_.ops = todo.size();
  say("compile-ahead pass: " + std::to_string(todo.size()) + " ops, " + std::to_string(lanes) + " at a time" +
      (compile_.already ? " (" + std::to_string(compile_.already) + " compiled by an earlier batch)" : ""));
  const double started = monotonic_seconds();
  bool interrupted = false;
  {
    std::unique_ptr<Executor> executor = compile_executor(qc.devices);
    compile_pass_ = true;
    progress_->set_phase("compile", todo.size());
    interrupted = run_queue(todo, qc, *executor, *this).interrupted;
    compile_pass_ = false;
  }  // the lanes' workers are gone before anything is timed
  compile_.seconds = monotonic_seconds() - started;
  interrupted = interrupted || signals::interrupt_count() > interrupts;
  char secs[32];
  std::snprintf(secs, sizeof secs, "%.1f s", compile_.seconds);
  say("compile-ahead pass: " + std::to_string(compile_.compiled) + " of " + std::to_string(todo.size()) +
      " ops compiled in " + secs + (compile_.failed ? ", " + std::to_string(compile_.failed) + " failed" : "") +
      (compile_.interrupted ? ", " + std::to_string(compile_.interrupted) + " interrupted" : ""));
  return interrupted;
}

// Why the batch's devices may not take the lanes now (somebody else's work
// on one), or "" when they may; the policy's own words, once, no waiting:
// the timed pass waits for a busy device as it always does.
std::string BatchRun::busy_device(const QueueConfig& qc) const {
  if (!qc.idle.check) return "";
  const DeviceQuery now = backend_.enumerate();
  for (const Device& mine : devices_) {
    for (const Device& d : now.devices) {
      if (d.index != mine.index) continue;
      if (std::string why = busy_reason(d, qc.idle); !why.empty())
        return "device " + device_label(mine) + " busy: " + why;
    }
  }
  return "";
}

// A compile-ahead run ended: its marker if it went through, a line either way.
void BatchRun::compiled(const Job& job, const OpLaunch& l, const OpOutcome& out) {
  const OpSpec& op = o_.ops[job.op_index];
  if (out.disk_full) out_of_space("compile-ahead run of " + op.name);
  // An op whose tests all skip here (a missing library) has nothing to
  // compile, now or in its timed run: done as much as one that passed.
  bool through = out.status == Status::passed || out.status == Status::unsupported || out.status == Status::no_tests;
  std::string note;
  if (const std::string doubt = through ? compile_doubt(l.run_dir, out.status) : ""; !doubt.empty()) {
    through = false;
    warn_once("compile-ahead " + op.name + ": " + doubt);
  }
  if (through) {
    ++compile_.compiled;
    std::string error;
    mark_compiled(compile_.triton_dir, compile_.keys[job.op_index], op.name, dir_.string(), &error);
    // Once: each failure names a temporary file of its own.
    if (!error.empty() && !compile_.marker_failed) {
      compile_.marker_failed = true;
      warn_once("cannot leave a compile-ahead marker (the next batch compiles again): " + error);
    }
  } else {
    ++(out.status == Status::interrupted ? compile_.interrupted : compile_.failed);
    note = " (" + out.reason + "; its timed run compiles it)";
  }
  char secs[32];
  std::snprintf(secs, sizeof secs, "%.1fs", out.seconds);
  const std::string line = "compiled " + op.name + " ahead on device " + device_label(l.device) + ": " +
                           to_string(out.status) + " " + secs + note;
  log(line);
  progress_->line(line);
}

json::Value BatchRun::compile_report(json::Alloc& a) const {
  json::Value c(rapidjson::kObjectType);
  c.AddMember("lanes", compile_.lanes, a);
  if (compile_.off.empty()) {
    c.AddMember("off", json::Value(rapidjson::kNullType), a);
  } else {
    c.AddMember("off", json::str(compile_.off, a), a);
  }
  c.AddMember("triton_cache", json::str(compile_.triton_dir, a), a);
  c.AddMember("devices", json::str_array(compile_.devices, a), a);
  c.AddMember("ops", static_cast<uint64_t>(compile_.ops), a);
  c.AddMember("compiled", static_cast<uint64_t>(compile_.compiled), a);
  c.AddMember("failed", static_cast<uint64_t>(compile_.failed), a);
  c.AddMember("interrupted", static_cast<uint64_t>(compile_.interrupted), a);
  c.AddMember("compiled_before", static_cast<uint64_t>(compile_.already), a);
  c.AddMember("seconds", compile_.seconds, a);
  return c;
}

}  // namespace zl::batch
