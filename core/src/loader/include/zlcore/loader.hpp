// Loads every backend in a directory. A file that is not a usable backend is
// skipped with a one-line reason; the good ones still load (the OpenCL ICD
// loader's rule). Libraries stay loaded until the process exits.
//
// A backend runs code the moment it is loaded (its constructors), when its
// entry is called and when it enumerates devices; a fault there (exit(0),
// abort, a segfault, a hang) would end or freeze every command. So each file
// is first probed in a short-lived child process, with a time limit, and only
// files that passed are loaded in process (docs/backend-abi.md, "Probing").
// Verdicts are cached per file (path, size, mtime, inode) so a warm
// `zlcore backends` spawns nothing.
#pragma once

#include <string>
#include <vector>

#include "zlcore/backend.hpp"

namespace zl {

struct Rejected {
  std::string path;
  std::string reason;
};

struct LoadReport {
  std::vector<Backend> backends;  // in file-name order
  std::vector<Rejected> rejected;
};

struct LoadOptions {
  // The program that probes a file: `<probe_program> __probe-backend FILE`
  // (zlcore itself, "/proc/self/exe"). Empty: no probe, every file is loaded
  // in process as it is (for tests of the loader's own checks; a program
  // that is not zlcore must never be named here).
  std::string probe_program;
  // Seconds a probe child may take; backend_timeout_s() by default.
  double timeout_s = 0;
  // Where verdicts are cached; user_cache_dir() (zlcore/paths.hpp) by default, "-" for none.
  std::string cache_dir;
};

// Scans `dir` for regular files named *.so in sorted order. Set ZL_DEBUG_LOADER=1
// to trace every step on stderr.
LoadReport load_backends(const std::string& dir, const LoadOptions& opts = {});
// Every directory in order, as one report: a name taken in an earlier
// directory makes a later file that claims it a rejected one (registry.hpp).
LoadReport load_backends(const std::vector<std::string>& dirs, const LoadOptions& opts = {});

// Where backends are looked for (docs/cli.md, "Backend directories"), like the
// Vulkan and OpenCL loaders: the --backend-dir values when given (each may be
// a list A:B; they replace the default), else the directories of
// ZL_BACKEND_PATH (A:B) followed by the default. Throws UsageError naming the
// flag or the variable for a directory that does not exist or is not one.
std::vector<std::string> backend_search_path(const std::vector<std::string>& flag_values, const std::string& env_value,
                                             const std::string& default_dir);

// The options zlcore's commands use: probe with zlcore itself.
LoadOptions probing_load_options();

// The time limit for a backend's code, in seconds: each probe child, and
// each enumerate_devices call in process. ZL_BACKEND_TIMEOUT, default 10.
double backend_timeout_s();

// The hidden `zlcore __probe-backend FILE`: opens FILE as the loader would,
// reads its whole table, calls enumerate_devices once and reads the whole
// list, asks each device's state and releases what it got, reporting each
// stage on fd 3 (stdout when fd 3 is not open) before it runs. Returns the
// exit code.
int probe_backend_main(const std::string& file);

}  // namespace zl
