// What every hostile test needs: a scratch directory, and the zlcore binary
// run as a user would run it, with a time limit, so a test that would hang
// fails instead.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace hostile {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "zl-hostile-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }
  fs::path operator/(const std::string& name) const { return path_ / name; }

 private:
  fs::path path_;
};

inline std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void spit(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
}

struct Ran {
  int exit_code = -1;   // when it exited
  int term_signal = 0;  // when a signal ended it
  bool timed_out = false;
  double seconds = 0;
  std::string out, err;
};

// Runs argv with `env` added to ours; kills it after timeout_s. The
// sanitizer build's zlcore must not turn a plugin's segfault in a probe
// child into its own report and exit code: the child is meant to die of it.
inline Ran run(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
               double timeout_s, const fs::path& scratch) {
  Ran r;
  const fs::path out = scratch / ".run.out", err = scratch / ".run.err";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);

  std::map<std::string, std::string> all;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string kv = *e;
    size_t eq = kv.find('=');
    if (eq != std::string::npos) all[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  std::string asan = all.count("ASAN_OPTIONS") ? all["ASAN_OPTIONS"] + ":" : "";
  all["ASAN_OPTIONS"] = asan + "handle_segv=0:handle_abort=0";
  for (const auto& [k, v] : env) all[k] = v;
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : all) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp, args;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (std::string& s : argv_copy) args.push_back(s.data());
  args.push_back(nullptr);

  const auto start = std::chrono::steady_clock::now();
  pid_t pid = -1;
  int rc = posix_spawn(&pid, args[0], &actions, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    r.err = "cannot spawn " + argv[0];
    return r;
  }
  int status = 0;
  while (true) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (r.seconds > timeout_s) {
      r.timed_out = true;
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  // Whatever the command left in its group (a hung probe child, a tool).
  kill(-pid, SIGKILL);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.term_signal = WTERMSIG(status);
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

// zlcore itself, with its probe cache kept in the scratch directory.
// ZL_HOSTILE_CLI runs another build instead (to see a test fail on the code
// before its fix).
inline Ran zlcore(const std::vector<std::string>& args, const fs::path& scratch,
                  std::map<std::string, std::string> env = {}, double timeout_s = 60) {
  const char* other = std::getenv("ZL_HOSTILE_CLI");
  std::vector<std::string> argv{other != nullptr && *other != '\0' ? other : ZL_CLI};
  argv.insert(argv.end(), args.begin(), args.end());
  if (!env.count("ZL_CACHE_DIR")) env["ZL_CACHE_DIR"] = (scratch / ".zlcache").string();
  return run(argv, env, timeout_s, scratch);
}

inline std::string describe(const Ran& r) {
  return "exit " + std::to_string(r.exit_code) + (r.term_signal ? " signal " + std::to_string(r.term_signal) : "") +
         (r.timed_out ? " TIMED OUT" : "") + "\n--- stdout\n" + r.out + "--- stderr\n" + r.err;
}

inline size_t count_lines(const std::string& s) {
  size_t n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

}  // namespace hostile
