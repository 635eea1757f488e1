// Loads every backend in a directory. A file that is not a usable backend is
// skipped with a one-line reason; the good ones still load (the OpenCL ICD
// loader's rule). Libraries stay loaded until the process exits.
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

// Scans `dir` for regular files named *.so in sorted order. Set ZL_DEBUG_LOADER=1
// to trace every step on stderr.
LoadReport load_backends(const std::string& dir);

}  // namespace zl
