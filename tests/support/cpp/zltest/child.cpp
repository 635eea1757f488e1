#include "zltest/child.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

#include "zltest/files.hpp"

extern char** environ;

namespace zltest {

namespace {

// Ours plus `env`. The sanitizer build's zlcore must not turn a plugin's
// segfault in a probe child into its own report and exit code: the child is
// meant to die of it.
std::vector<std::string> child_environment(const std::map<std::string, std::string>& env) {
  std::map<std::string, std::string> all;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string kv = *e;
    size_t eq = kv.find('=');
    if (eq != std::string::npos) all[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  std::string asan = all.count("ASAN_OPTIONS") ? all["ASAN_OPTIONS"] + ":" : "";
  all["ASAN_OPTIONS"] = asan + "handle_segv=0:handle_abort=0";
  for (const auto& [k, v] : env) all[k] = v;
  std::vector<std::string> out;
  for (const auto& [k, v] : all) out.push_back(k + "=" + v);
  return out;
}

}  // namespace

Started start(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
              const fs::path& scratch, const fs::path& cwd) {
  static int serial = 0;
  Started s;
  const std::string stem = ".run" + std::to_string(++serial);
  s.out = scratch / (stem + ".out");
  s.err = scratch / (stem + ".err");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, s.out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, s.err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);

  std::vector<std::string> env_strings = child_environment(env);
  std::vector<char*> envp, args;
  for (std::string& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (std::string& a : argv_copy) args.push_back(a.data());
  args.push_back(nullptr);

  s.at = std::chrono::steady_clock::now();
  int rc = posix_spawn(&s.pid, args[0], &actions, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    s.pid = -1;
    s.spawn_error = "cannot spawn " + argv[0];
  }
  return s;
}

Ran finish(const Started& s, double timeout_s) {
  Ran r;
  if (s.pid < 0) {
    r.err = s.spawn_error;
    return r;
  }
  int status = 0;
  auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - s.at).count(); };
  while (true) {
    pid_t w = waitpid(s.pid, &status, WNOHANG);
    if (w == s.pid) break;
    if (seconds() > timeout_s) {
      r.timed_out = true;
      kill(-s.pid, SIGKILL);
      waitpid(s.pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  // Whatever the command left in its group (a hung probe child, a tool).
  kill(-s.pid, SIGKILL);
  r.seconds = seconds();
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.term_signal = WTERMSIG(status);
  r.out = slurp(s.out);
  r.err = slurp(s.err);
  return r;
}

Ran run(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env, double timeout_s,
        const fs::path& scratch) {
  return finish(start(argv, env, scratch), timeout_s);
}

std::string describe(const Ran& r) {
  return "exit " + std::to_string(r.exit_code) + (r.term_signal ? " signal " + std::to_string(r.term_signal) : "") +
         (r.timed_out ? " TIMED OUT" : "") + "\n--- stdout\n" + r.out + "--- stderr\n" + r.err;
}

bool wait_until(const std::function<bool()>& done, double seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < until) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

}  // namespace zltest
