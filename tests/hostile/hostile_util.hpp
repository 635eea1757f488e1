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

// A command started and not yet waited for (a batch to interrupt or kill).
struct Started {
  pid_t pid = -1;
  fs::path out, err;
  std::chrono::steady_clock::time_point at;
  std::string spawn_error;
};

// Starts argv with `env` added to ours, in a process group of its own,
// output to files in `scratch`. The sanitizer build's zlcore must not turn a
// plugin's segfault in a probe child into its own report and exit code: the
// child is meant to die of it.
inline Started start(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
                     const fs::path& scratch, const fs::path& cwd = {}) {
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

// Waits for a started command; kills its group after timeout_s (counted from
// its start), and whatever it left in its group either way.
inline Ran finish(const Started& s, double timeout_s) {
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

// Runs argv with `env` added to ours; kills it after timeout_s.
inline Ran run(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env, double timeout_s,
               const fs::path& scratch) {
  return finish(start(argv, env, scratch), timeout_s);
}

// zlcore itself, with its probe cache kept in the scratch directory.
// ZL_HOSTILE_CLI runs another build instead (to see a test fail on the code
// before its fix).
inline Started start_zlcore(const std::vector<std::string>& args, const fs::path& scratch,
                            std::map<std::string, std::string> env = {}, const fs::path& cwd = {}) {
  const char* other = std::getenv("ZL_HOSTILE_CLI");
  std::vector<std::string> argv{other != nullptr && *other != '\0' ? other : ZL_CLI};
  argv.insert(argv.end(), args.begin(), args.end());
  if (!env.count("ZL_CACHE_DIR")) env["ZL_CACHE_DIR"] = (scratch / ".zlcache").string();
  return start(argv, env, scratch, cwd);
}

inline Ran zlcore(const std::vector<std::string>& args, const fs::path& scratch,
                  std::map<std::string, std::string> env = {}, double timeout_s = 60, const fs::path& cwd = {}) {
  return finish(start_zlcore(args, scratch, std::move(env), cwd), timeout_s);
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
