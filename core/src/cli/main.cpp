// zlcore's entry: global options, dispatch to a command, and the one place
// where typed errors become exit codes.
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "../util/access_refusal.hpp"
#include "../util/printable.hpp"
#include "command.hpp"
#include "zlcore/atomic_file.hpp"
#include "zlcore/errors.hpp"
#include "zlcore/loader.hpp"
#include "zlcore/paths.hpp"
#include "zlcore/signals.hpp"
#include "zlcore/tuner_cache.hpp"

namespace {

void usage(std::ostream& out) {
  out << "usage: zlcore [--backend-dir DIR[:DIR...]] <command> [options]\n\ncommands:\n";
  for (const zl::cli::Command& c : zl::cli::commands()) {
    out << "  " << c.name << std::string(10 - std::min<size_t>(9, std::strlen(c.name)), ' ') << c.summary << "\n";
  }
  out << "\nglobal options:\n"
         "  --backend-dir DIR[:DIR...]  load backends from these directories, in order, instead of the\n"
         "                              default search path (ZL_BACKEND_PATH, then "
      << zl::default_backend_dir()
      << ")\n"
         "  --version                   print the version\n"
         "  -h, --help                  this help; 'zlcore <command> --help' for a command's options and variables\n"
         "\nenvironment (every command):\n"
         "  ZL_BACKEND_PATH     more backend directories (A:B), searched before the default one; not with "
         "--backend-dir\n"
         "  ZL_BACKEND_TIMEOUT  seconds a backend's probe child and each device enumeration may take (default 10)\n"
         "  ZL_DEBUG_LOADER     a boolean: trace every step of backend loading on stderr\n"
         "  ZL_CACHE_DIR        where probe verdicts and the suite index are cached (default $XDG_CACHE_HOME/zlcore, "
         "else ~/.cache/zlcore)\n"
         "  ZL_DATA_DIR         another share/zlcore (rules.yaml, Python plugins, the embedded example suite)\n"
         "booleans, in flags and variables: 1/0, true/false, yes/no, on/off, in any case\n";
}

}  // namespace

int main(int argc, char** argv) {
  // Hidden: the child side of probing a backend file (loader.hpp), run by
  // zlcore itself before it loads that file in process.
  if (argc == 3 && std::strcmp(argv[1], "__probe-backend") == 0) return zl::probe_backend_main(argv[2]);
  std::vector<std::string> backend_dir_flags;
  std::vector<std::string> rest;
  // --backend-dir is global and may stand before or after the command; a
  // `--` ends zlcore's options.
  bool passthrough = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (!passthrough && arg == "--backend-dir") {
      if (i + 1 >= argc) {
        std::cerr << "zlcore: --backend-dir needs a directory\n";
        return zl::kExitUsage;
      }
      backend_dir_flags.push_back(argv[++i]);
    } else if (!passthrough && arg.rfind("--backend-dir=", 0) == 0) {
      backend_dir_flags.push_back(arg.substr(std::strlen("--backend-dir=")));
    } else {
      if (arg == "--") passthrough = true;
      rest.push_back(arg);
    }
  }
  // Given twice, one of them would silently lose: a list says the order.
  if (backend_dir_flags.size() > 1) {
    std::cerr << "zlcore: --backend-dir is given " << backend_dir_flags.size() << " times (" << backend_dir_flags[0]
              << ", " << backend_dir_flags[1] << "); give one list: --backend-dir " << backend_dir_flags[0] << ":"
              << backend_dir_flags[1] << "\n";
    return zl::kExitUsage;
  }
  if (rest.empty() || rest[0] == "--help" || rest[0] == "-h" || rest[0] == "help") {
    usage(rest.empty() ? std::cerr : std::cout);
    return rest.empty() ? zl::kExitUsage : zl::kExitOk;
  }
  if (rest[0] == "--version") {
    std::cout << "zlcore " << ZL_VERSION << " (backend ABI " << ZL_BACKEND_ABI_MAJOR << "." << ZL_BACKEND_ABI_MINOR
              << ")\n";
    return zl::kExitOk;
  }

  zl::anchor_cache_env();
  const std::string name = rest[0];
  std::vector<std::string> args(rest.begin() + 1, rest.end());
  for (const zl::cli::Command& c : zl::cli::commands()) {
    if (name != c.name) continue;
    try {
      const char* env_path = std::getenv("ZL_BACKEND_PATH");
      zl::cli::Context ctx(
          zl::backend_search_path(backend_dir_flags, env_path != nullptr ? env_path : "", zl::default_backend_dir()));
      return c.run(ctx, args);
    } catch (const zl::PreflightError& e) {
      std::cout.flush();
      if (zl::signals::interrupt_count() > 0 || zl::signals::children_stopped() > 0) {
        // SIGINT/SIGTERM reached the whole process tree (Ctrl-C, scancel)
        // while a check's child ran: the check failed because it was
        // stopped, and the op was interrupted, not misconfigured. The child
        // may have died of it before our own handler ran.
        std::cerr << "zlcore: interrupted during the " << e.check() << " check\n";
        return zl::kExitInterrupted;
      }
      // Messages quote what was given (an op name, a path): never raw to a terminal.
      std::cerr << "PREFLIGHT_FAILED check=" << e.check() << " " << zl::printable(e.what()) << "\n";
      return zl::kExitPreflight;
    } catch (const zl::UsageError& e) {
      std::cout.flush();
      std::cerr << "zlcore: " << zl::printable(e.what()) << "\n";
      return zl::kExitUsage;
    } catch (const std::exception& e) {
      std::cout.flush();
      // A directory the user may not write (an --out, the working directory)
      // is theirs to fix, like a bad flag.
      if (const std::string refusal = zl::access_refusal(e); !refusal.empty()) {
        std::cerr << "zlcore: " << name << ": " << zl::printable(refusal) << "\n";
        return zl::kExitUsage;
      }
      // A full disk is the machine's state, not a bug of ours.
      std::cerr << "zlcore: " << (zl::is_out_of_space(e) ? "" : "internal error: ") << zl::printable(e.what()) << "\n";
      return zl::kExitFailed;
    }
  }
  std::cerr << "zlcore: unknown command '" << zl::printable(name) << "'\n";
  usage(std::cerr);
  return zl::kExitUsage;
}
