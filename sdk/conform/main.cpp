// zlcore-conform: checks one backend file against the rules of
// docs/backend-abi.md and prints one line per rule, PASS, FAIL or SKIP with
// the reason. Each rule runs in a child process (the loader's probe does
// the first one, `loads`, exactly as zlcore would), so a backend that
// crashes or hangs fails the rule it did it in and never takes the kit down.
#include <sys/stat.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <future>
#include <string>
#include <vector>

#include "probe.hpp"
#include "rules.hpp"
#include "util/printable.hpp"
#include "zlcore/loader.hpp"

namespace zl::conform {
namespace {

// docs/cli.md, "zlcore-conform".
constexpr int kAllPassed = 0;
constexpr int kRuleFailed = 1;
constexpr int kUsage = 2;

const char* const kUsageText =
    "usage: zlcore-conform [--timeout SECONDS] BACKEND.so\n"
    "       zlcore-conform --list\n"
    "Runs every rule of the backend ABI (docs/backend-abi.md) against BACKEND.so and prints one line\n"
    "per rule: PASS RULE, FAIL RULE: why, SKIP RULE: why. Exit 0 when no rule failed, 1 when one did,\n"
    "2 for a bad command line. Each rule runs in a child with SECONDS to answer (default\n"
    "ZL_BACKEND_TIMEOUT, else 10).\n";

int usage_error(const std::string& line) {
  std::fprintf(stderr, "zlcore-conform: %s\n%s", line.c_str(), kUsageText);
  return kUsage;
}

struct Line {
  Outcome outcome;
  const Rule* rule;
};

Outcome from_verdict(const loader::ProbeVerdict& v) {
  if (!v.ok) return fail(v.reason);
  for (const std::string& note : v.notes) {
    if (note.rfind("skip ", 0) == 0) return skip(note.substr(5));
  }
  return pass();
}

std::vector<Line> run_rules(const std::string& file, double timeout_s) {
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  std::vector<Line> lines;
  const auto loads = loader::probe_files({file}, self, timeout_s);
  const Outcome loaded = from_verdict(loads.front());
  std::vector<std::future<Outcome>> pending;
  for (const Rule& r : rules()) {
    if (r.run != nullptr && loaded.kind == Outcome::kFail) {
      pending.push_back(std::async(std::launch::deferred, [] { return skip("the loader rejects the file (loads)"); }));
    } else if (r.run != nullptr) {
      const std::vector<std::string> verb{"__conform-rule", r.id};
      pending.push_back(std::async(std::launch::async, [=] {
        return from_verdict(loader::probe_files({file}, self, timeout_s, verb).front());
      }));
    } else if (std::strcmp(r.id, "loads") == 0) {
      pending.push_back(std::async(std::launch::deferred, [=] { return loaded; }));
    } else {
      pending.push_back(std::async(std::launch::deferred, [=] {
        const std::string bad = exports_problem(file);
        return bad.empty() ? pass() : fail(bad);
      }));
    }
  }
  for (size_t i = 0; i < pending.size(); ++i) lines.push_back({pending[i].get(), &rules()[i]});
  return lines;
}

int print(const std::vector<Line>& lines, const std::string& file) {
  int failed = 0, skipped = 0;
  for (const Line& l : lines) {
    const char* word = l.outcome.kind == Outcome::kPass ? "PASS" : l.outcome.kind == Outcome::kFail ? "FAIL" : "SKIP";
    if (l.outcome.kind == Outcome::kPass) {
      std::printf("PASS %s\n", l.rule->id);
    } else {
      // Reasons quote the backend (names, symbols, what it printed): escaped,
      // as zlcore escapes what it prints, so a hostile one cannot reach the terminal.
      std::printf("%s %s: %s\n", word, l.rule->id, printable(l.outcome.why).c_str());
    }
    failed += l.outcome.kind == Outcome::kFail;
    skipped += l.outcome.kind == Outcome::kSkip;
  }
  std::fflush(stdout);
  std::fprintf(stderr, "zlcore-conform: %s: %zu rules, %d failed, %d skipped\n", file.c_str(), lines.size(), failed,
               skipped);
  return failed > 0 ? kRuleFailed : kAllPassed;
}

int conform_main(int argc, char** argv) {
  double timeout_s = backend_timeout_s();
  std::string file;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(kUsageText, stdout);
      return kAllPassed;
    }
    if (a == "--list") {
      for (const Rule& r : rules()) std::printf("%-24s %s\n", r.id, r.what);
      return kAllPassed;
    }
    if (a == "--timeout") {
      char* end = nullptr;
      const char* v = i + 1 < argc ? argv[++i] : "";
      timeout_s = std::strtod(v, &end);
      if (end == v || *end != '\0' || !(timeout_s > 0) || timeout_s > 86400)
        return usage_error(std::string("--timeout '") + v + "' is not a number of seconds in (0, 86400]");
    } else if (!a.empty() && a[0] == '-') {
      return usage_error("unknown option '" + a + "'");
    } else if (!file.empty()) {
      return usage_error("one backend file at a time ('" + file + "', then '" + a + "')");
    } else {
      file = a;
    }
  }
  if (file.empty()) return usage_error("no backend file given");
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    return usage_error("'" + file + "' is not a regular file (give the backend's .so by path)");
  return print(run_rules(std::filesystem::absolute(file).string(), timeout_s), file);
}

}  // namespace
}  // namespace zl::conform

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "__probe-backend") == 0) return zl::probe_backend_main(argv[2]);
  if (argc == 4 && std::strcmp(argv[1], "__conform-rule") == 0) return zl::conform::rule_child_main(argv[2], argv[3]);
  return zl::conform::conform_main(argc, argv);
}
