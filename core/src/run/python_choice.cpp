#include "zlcore/python_choice.hpp"

#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "zlcore/errors.hpp"
#include "zlcore/paths.hpp"
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
  bool has_pytest = false;  // and every other module asked for
  std::string version, executable, failure;
  std::string settings_error;  // the line the child would refuse the timer settings with
};

// The probe's script: version, executable, missing modules, then what the
// child's timer settings parser (zlcore_pytest.timers.settings, from the
// plugin directory in argv[1]) says of this environment, so a setting the
// child would refuse stops the command before anything is written. Asked
// only where a ZL_ variable is set (the parser's import is ~15 ms, as much
// as the rest of the probe); an interpreter that cannot import the plugins
// says nothing of the settings.
constexpr const char* kProbeScript =
    "import importlib.util,os,sys\n"
    "print('%d.%d.%d' % sys.version_info[:3])\n"
    "print(sys.executable)\n"
    "print('missing:', *(m for m in sys.argv[2:] if not importlib.util.find_spec(m)))\n"
    "if any(k.startswith('ZL_') for k in os.environ):\n"
    "  try:\n"
    "    sys.path.insert(0, sys.argv[1])\n"
    "    from zlcore_pytest.timers.settings import environment_error\n"
    "    print('settings:', environment_error().replace('\\n', ' '))\n"
    "  except ImportError:\n"
    "    pass\n";

// find_spec rather than import: it proves a module is importable by this
// interpreter at a fraction of the cost of importing it (torch takes seconds).
Probe probe(const std::string& command, const std::vector<std::string>& modules) {
  Probe p;
  const std::string where = locate(command);
  if (where.empty()) {
    p.failure = command.find('/') != std::string::npos ? "does not exist or is not executable" : "is not on PATH";
    return p;
  }
  std::vector<std::string> argv = {command, "-c", kProbeScript, python_plugin_dir(), "pytest"};
  argv.insert(argv.end(), modules.begin(), modules.end());
  auto out = capture_output(argv, "", 30);
  if (!out) {
    p.failure = "(" + where + ") did not run as a Python 3 interpreter";
    return p;
  }
  std::istringstream lines(*out);
  std::string missing;
  std::getline(lines, p.version);
  std::getline(lines, p.executable);
  std::getline(lines, missing);
  std::string settings;
  if (std::getline(lines, settings) && settings.rfind("settings: ", 0) == 0) {
    p.settings_error = settings.substr(sizeof("settings: ") - 1);
  }
  // A program that exits 0 printing nothing (/bin/true) is no interpreter.
  if (missing.rfind("missing:", 0) != 0) {
    p.failure = "(" + where + ") did not run as a Python 3 interpreter";
    return p;
  }
  missing = missing.substr(std::min(missing.size(), sizeof("missing:")));
  p.ran = true;
  p.has_pytest = missing.empty();
  if (p.executable.empty()) p.executable = where;
  // Where the name led, not sys.executable: a wrapper script or a venv's link
  // is what the user has to find.
  if (!p.has_pytest) {
    for (char& c : missing) c = c == ' ' ? ',' : c;  // one word: the message's last
    p.failure = "(" + where + ", Python " + p.version + ") cannot import " + missing;
  }
  return p;
}

void refuse_settings(const Probe& p) {
  if (!p.settings_error.empty()) throw UsageError(p.settings_error);
}

}  // namespace

std::vector<std::string> modules_for_device(const std::string& torch_device) {
  // As the device_setup plugin reads ZL_TORCH_DEVICE: these name no device torch drives.
  std::string device = torch_device;
  for (char& ch : device) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  for (const char* host : {"", "cpu", "host", "none"}) {
    if (device == host) return {};
  }
  return {"torch"};
}

const std::vector<std::string>& python_candidates() {
  static const std::vector<std::string> c{"python3", "/usr/bin/python3"};
  return c;
}

PythonChoice choose_python(const std::string& requested, const std::vector<std::string>& modules) {
  std::string needs = "pytest";
  for (const std::string& m : modules) needs += ", " + m;
  PythonChoice c;
  if (!requested.empty()) {
    const Probe p = probe(requested, modules);
    if (!p.has_pytest) {
      // "... cannot import torch: install it there (X -m pip install torch) or give ...".
      const std::string missing = p.failure.substr(p.failure.rfind(' ') + 1);
      std::string pip = missing;
      for (char& ch : pip) ch = ch == ',' ? ' ' : ch;
      throw PreflightError(
          "python", "--python " + requested + " " + p.failure + ": " +
                        (p.ran ? "install " + std::string(missing.find(',') == std::string::npos ? "it" : "them") +
                                     " there (" + requested + " -m pip install " + pip + ") or give"
                               : "give") +
                        " an interpreter that has " + needs + " with --python PATH");
    }
    refuse_settings(p);
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
    const Probe p = probe(candidate, modules);
    if (p.has_pytest) {
      refuse_settings(p);
      c.command = candidate;
      c.path = p.executable;
      c.version = p.version;
      return c;
    }
    c.passed_over.push_back(candidate + " " + p.failure);
  }
  std::string tried;
  for (const std::string& t : c.passed_over) tried += (tried.empty() ? "" : "; ") + t;
  throw PreflightError("python", "no Python with " + needs + " found: " + tried +
                                     ". Install them (python3 -m pip install ...) or give an interpreter that "
                                     "has them with --python PATH");
}

}  // namespace zl
