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
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>

#include "outcome.hpp"
#include "zlcore/atomic_file.hpp"
#include "zlcore/paths.hpp"
#include "zlcore/process.hpp"

extern char** environ;

namespace fs = std::filesystem;

namespace zl::batch {
namespace {

struct Worker {
  pid_t pid = -1;
  std::string socket;
  int generation = 0;
};

class WarmExecutor;

class WarmExecution : public Execution {
 public:
  WarmExecution(std::unique_ptr<Execution> inner, WarmExecutor* owner, int device)
      : inner_(std::move(inner)), owner_(owner), device_(device) {}
  int output_fd() const override { return inner_->output_fd(); }
  int exit_fd() const override { return inner_->exit_fd(); }
  void pump() override;
  bool poll_done() override;
  double elapsed() const override { return inner_->elapsed(); }
  void interrupt() override { inner_->interrupt(); }  // run forwards it to the worker
  void kill(bool as_timeout) override;
  OpOutcome outcome(bool interrupted) override;

 private:
  std::unique_ptr<Execution> inner_;
  WarmExecutor* owner_;
  int device_;
};

class WarmExecutor : public Executor {
 public:
  explicit WarmExecutor(WarmExecutorConfig c) : c_(std::move(c)), cold_(make_cold_executor(c_.run)) {
    // Unix socket paths are limited to 108 bytes; batch directories are not.
    char tmpl[] = "/tmp/zlw-XXXXXX";
    if (::mkdtemp(tmpl) != nullptr) sock_dir_ = tmpl;
    workers_dir_ = fs::path(c_.run.batch_dir) / "workers";
  }
  ~WarmExecutor() override {
    for (auto& [device, w] : workers_) stop(w);
    std::error_code ec;
    if (!sock_dir_.empty()) fs::remove_all(sock_dir_, ec);
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
    if (w.pid <= 0 && !sock_dir_.empty()) spawn(w, l.device);
    // Without a worker the run simply goes cold (and its identity says why).
    if (w.pid > 0) launch.run_args.insert(launch.run_args.end(), {"--worker-socket", w.socket});
    std::unique_ptr<Execution> inner = cold_->start(launch, error);
    if (!inner) return nullptr;
    return std::make_unique<WarmExecution>(std::move(inner), this, l.device.index);
  }

  // Reaps dead workers and records how each died for the run waiting on it.
  void reap() {
    for (auto& [device, w] : workers_) {
      if (w.pid <= 0) continue;
      int status = 0;
      pid_t r = ::waitpid(w.pid, &status, WNOHANG);
      if (r == w.pid) {
        ::kill(-w.pid, SIGKILL);  // anything it started dies with it
        record_exit(w, status);
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
    ::kill(-w.pid, SIGKILL);
    ::kill(w.pid, SIGKILL);
    int status = 0;
    while (::waitpid(w.pid, &status, 0) < 0 && errno == EINTR) {
    }
    record_exit(w, status);
  }

  void spawn(Worker& w, const Device& device) {
    ++w.generation;
    w.socket = sock_dir_ + "/d" + std::to_string(device.index) + "-" + std::to_string(w.generation) + ".sock";
    std::error_code ec;
    fs::create_directories(workers_dir_, ec);
    const std::string log = (workers_dir_ / ("device" + std::to_string(device.index) + "-" +
                                             std::to_string(w.generation) + ".log")).string();

    // The device is fixed before the first import: flag_gems initializes it then.
    std::map<std::string, std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
      const char* eq = std::strchr(*e, '=');
      if (eq != nullptr) env[std::string(*e, static_cast<size_t>(eq - *e))] = eq + 1;
    }
    const std::string pp = env.count("PYTHONPATH") ? env["PYTHONPATH"] : "";
    env["PYTHONPATH"] = python_plugin_dir() + (pp.empty() ? "" : ":" + pp);
    env["PYTHONUNBUFFERED"] = "1";
    for (const std::string& var : c_.visibility_env) env[var] = device.visibility_value;
    if (!c_.framework_vendor.empty()) env["GEMS_VENDOR"] = c_.framework_vendor;
    std::vector<std::string> env_text;
    for (const auto& [k, v] : env) env_text.push_back(k + "=" + v);
    std::vector<char*> envp;
    for (std::string& s : env_text) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::vector<std::string> argv = {c_.python, "-m", "zlcore_pytest.worker", "--socket", w.socket};
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
  std::string sock_dir_;
  fs::path workers_dir_;
  std::map<int, Worker> workers_;
};

void WarmExecution::pump() {
  inner_->pump();
  owner_->reap();
}

bool WarmExecution::poll_done() {
  owner_->reap();
  return inner_->poll_done();
}

void WarmExecution::kill(bool as_timeout) {
  inner_->kill(as_timeout);
  owner_->retire(device_);  // it may still be running this op
}

OpOutcome WarmExecution::outcome(bool interrupted) {
  OpOutcome out = inner_->outcome(interrupted);
  // The op did not end on its own terms: whatever the worker holds now (a
  // half-finished op, a SIGINT it is still handling) must not meet the next.
  if (interrupted || out.status == Status::timeout || out.status == Status::crashed ||
      out.status == Status::interrupted) {
    owner_->retire(device_);
  }
  return out;
}

}  // namespace

std::unique_ptr<Executor> make_warm_executor(WarmExecutorConfig config) {
  return std::make_unique<WarmExecutor>(std::move(config));
}

}  // namespace zl::batch
