// The warm executor (docs/warm-workers.md): each op is still a child
// `zlcore run` (so preflight, the run directory, the identity and the harvest
// exist once, in run.cpp), but that run hands its pytest to a long-lived
// `python -m zlcore_pytest.worker` of the op's device instead of starting
// python, so the ~11 s of imports are paid once per worker, not once per op.
//
// The executor is the worker's parent: it starts it lazily, reaps it, and
// leaves its wait status in <socket>.exit, which is how a run whose worker
// died under it learns the signal. Any op that did not end on its own terms
// (timeout, crash, interrupt, a kill by the batch) takes its worker with it:
// the next op on that device gets a fresh one, never a half-reset process.
//
// With a standby (WarmExecutorConfig::standby), from a device's second op on a
// second worker imports what touches no device and waits; a retired worker's
// successor is that standby, so the next op pays only the rest of the imports.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>

#include "../util/json.hpp"
#include "../util/json_read.hpp"
#include "../util/process_tree.hpp"
#include "outcome.hpp"
#include "socket_dir.hpp"
#include "zlcore/atomic_file.hpp"
#include "zlcore/autotune.hpp"
#include "zlcore/paths.hpp"
#include "zlcore/process.hpp"
#include "zlcore/provider.hpp"

namespace fs = std::filesystem;

namespace zl::batch {
namespace {

// Outcomes a fresh process would not change: the op measured, the suite
// declined it, or it never got to the worker's state.
bool settled_or_final(Status s) {
  return is_settled(s) || s == Status::timeout || s == Status::interrupted || s == Status::preflight_failed ||
         s == Status::skipped;
}

struct Worker {
  pid_t pid = -1;
  std::string socket;
};

class WarmExecutor;

// One op in a warm worker, and, when the worker is to blame for how it ended,
// that op once more in a fresh process (the rerun replaces the first attempt
// as what the scheduler sees, so the row is the rerun's).
class WarmExecution : public Execution {
 public:
  WarmExecution(std::unique_ptr<Execution> inner, WarmExecutor* owner, OpLaunch launch)
      : inner_(std::move(inner)), owner_(owner), launch_(std::move(launch)) {}
  int output_fd() const override { return inner_->output_fd(); }
  int exit_fd() const override { return inner_->exit_fd(); }
  void pump() override;
  bool poll_done() override;
  double elapsed() const override { return inner_->elapsed(); }
  pid_t pid() const override { return inner_->pid(); }
  void interrupt() override {
    interrupted_ = true;
    inner_->interrupt();  // run forwards it to the worker
  }
  void kill(bool as_timeout) override;
  OpOutcome outcome(bool interrupted) override;

 private:
  // After the warm attempt: why it must run again in a fresh process, or "".
  std::string rerun_reason(const OpOutcome& warm) const;
  std::string unhealthy_reason() const;

  std::unique_ptr<Execution> inner_;
  WarmExecutor* owner_;
  OpLaunch launch_;
  bool interrupted_ = false;
  bool killed_ = false;
  bool rerunning_ = false;
  std::string rerun_note_;  // what the first attempt came to, for the row's reason
};

class WarmExecutor : public Executor {
 public:
  explicit WarmExecutor(WarmExecutorConfig c) : c_(std::move(c)), cold_(make_cold_executor(c_.run)) {
    workers_dir_ = fs::path(c_.run.batch_dir) / "workers";
  }
  ~WarmExecutor() override {
    for (auto& [device, w] : workers_) stop(w);
    for (auto& [device, w] : standbys_) stop(w);
    // sock_dir_ goes after this body: the workers are stopped by then.
  }
  const char* kind() const override { return "warm"; }

  bool holds_device(int device_index) const override {
    auto it = workers_.find(device_index);
    return it != workers_.end() && it->second.pid > 0;
  }

  std::unique_ptr<Execution> start(const OpLaunch& l, std::string* error) override {
    reap();
    OpLaunch launch = l;
    Worker& w = workers_[l.device.index];
    if (w.pid <= 0 && !sock_dir_.path().empty()) take_standby_or_spawn(w, l.device);
    // From the device's first op: the standby's imports then run beside the
    // new worker's own, not beside a later op's measuring, and it is ready by
    // the first retirement. They touch no device. Right after a takeover
    // too, so that two retirements in a row still find one.
    if (w.pid > 0 && c_.standby) {
      Worker& spare = standbys_[l.device.index];
      if (spare.pid <= 0) spawn(spare, l.device, true);
    }
    // Without a worker the run simply goes cold (and its identity says why).
    if (w.pid > 0) launch.run_args.insert(launch.run_args.end(), {"--worker-socket", w.socket});
    std::unique_ptr<Execution> inner = cold_->start(launch, error);
    if (!inner) return nullptr;
    return std::make_unique<WarmExecution>(std::move(inner), this, l);
  }

  // The same op in a fresh process (no worker socket): a rerun.
  std::unique_ptr<Execution> start_cold(const OpLaunch& l, std::string* error) { return cold_->start(l, error); }
  bool reruns_cold() const { return c_.rerun_cold; }

  // Reaps dead workers and records how each died for the run waiting on it.
  void reap() {
    for (auto* pool : {&workers_, &standbys_}) {
      for (auto& [device, w] : *pool) {
        if (w.pid <= 0) continue;
        int status = 0;
        pid_t r = ::waitpid(w.pid, &status, WNOHANG);
        if (r == w.pid) {
          ::kill(-w.pid, SIGKILL);  // anything it started dies with it
          record_exit(w, status);
        }
      }
    }
  }

  void retire(int device) {
    auto it = workers_.find(device);
    if (it != workers_.end()) stop(it->second);
  }

 private:
  void record_exit(Worker& w, int status) {
    const std::string text = WIFSIGNALED(status) ? "signal " + std::to_string(WTERMSIG(status)) + "\n"
                                                 : "exit " + std::to_string(WEXITSTATUS(status)) + "\n";
    try {
      write_file_atomic(w.socket + ".exit", text);
    } catch (const std::exception&) {
    }
    ::unlink(w.socket.c_str());
    w.pid = -1;
  }

  void stop(Worker& w) {
    if (w.pid <= 0) return;
    kill_tree(w.pid);
    int status = 0;
    while (::waitpid(w.pid, &status, 0) < 0 && errno == EINTR) {
    }
    record_exit(w, status);
  }

  // A live standby becomes the device's worker; without one, a fresh worker.
  void take_standby_or_spawn(Worker& w, const Device& device) {
    auto spare = standbys_.find(device.index);
    if (spare != standbys_.end() && spare->second.pid > 0) {
      w = spare->second;
      standbys_.erase(spare);
      return;
    }
    spawn(w, device, false);
  }

  void spawn(Worker& w, const Device& device, bool standby) {
    const std::string generation = std::to_string(++generations_[device.index]);
    w.socket = sock_dir_.path() + "/d" + std::to_string(device.index) + "-" + generation + ".sock";
    std::error_code ec;
    fs::create_directories(workers_dir_, ec);
    const std::string log =
        (workers_dir_ / (c_.log_prefix + "device" + std::to_string(device.index) + "-" + generation + ".log")).string();

    // The device is fixed before the first import: flag_gems initializes it then.
    std::map<std::string, std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
      const char* eq = std::strchr(*e, '=');
      if (eq != nullptr) env[std::string(*e, static_cast<size_t>(eq - *e))] = eq + 1;
    }
    const std::string pp = env.count("PYTHONPATH") ? env["PYTHONPATH"] : "";
    env["PYTHONPATH"] = python_plugin_dir() + (pp.empty() ? "" : ":" + pp);
    env["PYTHONUNBUFFERED"] = "1";
    // What Triton reads at import (each @triton.autotune decides then whether
    // it keeps its winners on disk): set per op it would come after the
    // worker's imports, and every worker would tune again on a cache that
    // holds the winners.
    for (const auto& [k, v] : autotune_import_env()) env[k] = v;
    env["ZL_COMPILE_ONLY"] = "0";  // never inherited: a compile pass's lanes set it below
    for (const auto& [k, v] : c_.run.env_set) env[k] = v;
    for (const std::string& var : c_.visibility_env) env[var] = device.visibility_value;
    if (!c_.framework_vendor.empty()) env[FlagGemsProvider::vendor_env()] = c_.framework_vendor;
    std::vector<std::string> env_text;
    for (const auto& [k, v] : env) env_text.push_back(k + "=" + v);
    std::vector<char*> envp;
    for (std::string& s : env_text) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::vector<std::string> argv = {c_.python, "-m", "zlcore_pytest.worker", "--socket", w.socket};
    if (standby) argv.push_back("--standby");
    std::vector<char*> av;
    for (std::string& s : argv) av.push_back(s.data());
    av.push_back(nullptr);

    int log_fd = -1;
    try {
      log_fd = open_for_append(log);  // never through a link planted in --out
    } catch (const std::exception& e) {
      std::cerr << "zlcore batch: " << e.what() << "\n";
    }
    const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    pid_t pid = ::fork();
    if (pid == 0) {
      ::setpgid(0, 0);  // one kill(-pid) reaches whatever the op started
      if (null_fd >= 0) ::dup2(null_fd, 0);
      if (log_fd >= 0) {
        ::dup2(log_fd, 1);
        ::dup2(log_fd, 2);
      }
      if (!c_.suite_root.empty() && ::chdir(c_.suite_root.c_str()) != 0) _exit(127);
      ::signal(SIGINT, SIG_DFL);
      ::signal(SIGTERM, SIG_DFL);
      ::execvpe(av[0], av.data(), envp.data());
      _exit(127);
    }
    if (log_fd >= 0) ::close(log_fd);
    if (null_fd >= 0) ::close(null_fd);
    if (pid > 0) ::setpgid(pid, pid);  // either side may win the race
    w.pid = pid > 0 ? pid : -1;
  }

  WarmExecutorConfig c_;
  std::unique_ptr<Executor> cold_;
  SocketDir sock_dir_;
  fs::path workers_dir_;
  std::map<int, Worker> workers_;
  std::map<int, Worker> standbys_;  // at most one per device, waiting to be a worker
  std::map<int, int> generations_;  // workers started per device, standbys included
};

void WarmExecution::pump() {
  inner_->pump();
  owner_->reap();
}

std::string WarmExecution::unhealthy_reason() const {
  // The worker's own verdict on itself after the op, from the run's identity.
  try {
    rapidjson::Document doc;
    const std::string text = read_file(launch_.run_dir + "/run_identity.json");
    if (!json::parse(doc, text).empty() || !doc.IsObject() || !doc.HasMember("worker") || !doc["worker"].IsObject())
      return "";
    const auto& w = doc["worker"];
    if (!w.HasMember("healthy") || !w["healthy"].IsBool() || w["healthy"].GetBool()) return "";
    return w.HasMember("unhealthy_reason") && w["unhealthy_reason"].IsString() ? w["unhealthy_reason"].GetString()
                                                                               : "its health check failed";
  } catch (const std::exception&) {
    return "";
  }
}

std::string WarmExecution::rerun_reason(const OpOutcome& warm) const {
  if (settled_or_final(warm.status)) return "";
  if (const std::string unhealthy = unhealthy_reason(); !unhealthy.empty()) {
    return "the worker was unhealthy after it (" + unhealthy + ")";
  }
  // A worker that died takes the op with it; in a fresh process it may pass.
  if (warm.status == Status::crashed) return "the worker died under it (" + warm.reason + ")";
  return "";
}

bool WarmExecution::poll_done() {
  owner_->reap();
  if (!inner_->poll_done()) return false;
  if (rerunning_ || interrupted_ || killed_) return true;
  const OpOutcome warm = inner_->outcome(false);
  const std::string why = rerun_reason(warm);
  if (why.empty()) return true;
  // The worker is replaced either way; the op gets one more go in a fresh
  // process, in its own run directory (the warm attempt's is kept beside it),
  // unless the caller retries on its own.
  owner_->retire(launch_.device.index);
  if (!owner_->reruns_cold()) return true;
  rerunning_ = true;
  rerun_note_ = std::string("warm worker: ") + to_string(warm.status) + ", " + why + "; rerun in a fresh process";
  // Kept beside the rerun, never overwritten: runs/<op>.warm, .warm2, ...
  std::error_code ec;
  std::string aside = launch_.run_dir + ".warm";
  for (int n = 2; std::filesystem::exists(aside, ec); ++n) aside = launch_.run_dir + ".warm" + std::to_string(n);
  std::filesystem::rename(launch_.run_dir, aside, ec);
  try {
    append_log_line(launch_.log_path, "=== zlcore batch: " + rerun_note_ + " (first attempt in " +
                                          std::filesystem::path(aside).filename().string() + ")\n");
  } catch (const std::exception&) {
  }
  std::string error;
  std::unique_ptr<Execution> cold = owner_->start_cold(launch_, &error);
  if (!cold) {
    // The warm attempt's outcome stands, with the note, in its own directory.
    std::filesystem::rename(aside, launch_.run_dir, ec);
    rerun_note_ += " could not start: " + error;
    return true;
  }
  inner_ = std::move(cold);
  return false;
}

void WarmExecution::kill(bool as_timeout) {
  killed_ = true;
  inner_->kill(as_timeout);
  owner_->retire(launch_.device.index);  // it may still be running this op
}

OpOutcome WarmExecution::outcome(bool interrupted) {
  OpOutcome out = inner_->outcome(interrupted);
  if (rerunning_) {
    out.attempts = 2;
    out.reason = rerun_note_ + (out.reason.empty() ? "" : ": " + out.reason);
    return out;
  }
  // The op did not end on its own terms: whatever the worker holds now (a
  // half-finished op, a SIGINT it is still handling) must not meet the next.
  if (interrupted || out.status == Status::timeout || out.status == Status::crashed ||
      out.status == Status::interrupted) {
    owner_->retire(launch_.device.index);
  }
  // An op that passed can still leave the worker unhealthy (a graph capture
  // that failed inside it): its result stands, the worker goes.
  if (const std::string unhealthy = unhealthy_reason(); !unhealthy.empty()) {
    owner_->retire(launch_.device.index);
    out.reason += (out.reason.empty() ? "" : "; ") + std::string("the worker was replaced after it: ") + unhealthy;
  }
  return out;
}

}  // namespace

std::unique_ptr<Executor> make_warm_executor(WarmExecutorConfig config) {
  return std::make_unique<WarmExecutor>(std::move(config));
}

}  // namespace zl::batch
