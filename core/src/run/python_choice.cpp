#include "zlcore/python_choice.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "zlcore/errors.hpp"
#include "zlcore/process.hpp"

namespace zl {
namespace {

namespace fs = std::filesystem;

// Where a command name leads, as execvp would find it; empty when nowhere.
std::string locate(const std::string& command) {
  if (command.find('/') != std::string::npos) return access(command.c_str(), X_OK) == 0 ? command : "";
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const fs::path p = fs::path(dir.empty() ? "." : dir) / command;
    std::error_code ec;
    if (fs::is_regular_file(p, ec) && access(p.c_str(), X_OK) == 0) return p.string();
  }
  return "";
}

struct Probe {
  bool ran = false;
  bool has_pytest = false;
  std::string version, executable, failure;
};

// find_spec rather than import: it proves pytest is importable by this
// interpreter at a fraction of the cost of importing it.
Probe probe(const std::string& command) {
  Probe p;
  const std::string where = locate(command);
  if (where.empty()) {
    p.failure = command.find('/') != std::string::npos ? "does not exist or is not executable" : "is not on PATH";
    return p;
  }
  auto out = capture_output({command, "-c",
                             "import importlib.util,sys;"
                             "print('%d.%d.%d' % sys.version_info[:3]);"
                             "print(sys.executable);"
                             "print('ok' if importlib.util.find_spec('pytest') else 'missing')"},
                            "", 30);
  if (!out) {
    p.failure = "(" + where + ") did not run as a Python 3 interpreter";
    return p;
  }
  std::istringstream lines(*out);
  std::string status;
  std::getline(lines, p.version);
  std::getline(lines, p.executable);
  std::getline(lines, status);
  p.ran = true;
  p.has_pytest = status == "ok";
  if (p.executable.empty()) p.executable = where;
  // Where the name led, not sys.executable: a wrapper script or a venv's link
  // is what the user has to find.
  if (!p.has_pytest) p.failure = "(" + where + ", Python " + p.version + ") cannot import pytest";
  return p;
}

}  // namespace

const std::vector<std::string>& python_candidates() {
  static const std::vector<std::string> c{"python3", "/usr/bin/python3"};
  return c;
}

PythonChoice choose_python(const std::string& requested) {
  PythonChoice c;
  if (!requested.empty()) {
    const Probe p = probe(requested);
    if (!p.has_pytest) {
      throw PreflightError("python",
                           "--python " + requested + " " + p.failure +
                               (p.ran ? ": install pytest there (" + requested + " -m pip install pytest)" : "") +
                               " or give an interpreter that has it with --python PATH");
    }
    return {requested, p.executable, p.version, true, {}};
  }
  std::vector<std::string> seen;  // resolved paths: /usr/bin/python3 twice is tried once
  for (const std::string& candidate : python_candidates()) {
    std::error_code ec;
    const std::string where = locate(candidate);
    const std::string real = where.empty() ? candidate : fs::canonical(where, ec).string();
    bool again = false;
    for (const std::string& s : seen) again = again || s == real;
    if (again) continue;
    seen.push_back(real);
    const Probe p = probe(candidate);
    if (p.has_pytest) {
      c.command = candidate;
      c.path = p.executable;
      c.version = p.version;
      return c;
    }
    c.passed_over.push_back(candidate + " " + p.failure);
  }
  std::string tried;
  for (const std::string& t : c.passed_over) tried += (tried.empty() ? "" : "; ") + t;
  throw PreflightError("python", "no Python with pytest found: " + tried +
                                     ". Install pytest (python3 -m pip install pytest) or give an interpreter that "
                                     "has it with --python PATH");
}

}  // namespace zl
