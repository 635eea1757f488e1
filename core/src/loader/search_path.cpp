// The backend search path. A list rather than one directory: a vendor's
// backend lives in its own package's directory, and adding it must not mean
// copying files into zlcore's (the OpenCL ICD and Vulkan loaders' reasoning
// for their *_PATH / *_ADD_* variables). Every directory named is checked
// here, so a typo is one line at the start rather than "unknown backend".
#include <filesystem>

#include "../util/text.hpp"
#include "zlcore/errors.hpp"
#include "zlcore/loader.hpp"

namespace zl {
namespace {

namespace fs = std::filesystem;

void add_checked(std::vector<std::string>& out, const std::string& dir, const std::string& what) {
  std::error_code ec;
  const fs::file_status st = fs::status(dir, ec);
  if (!fs::exists(st)) throw UsageError(what + ": " + dir + " does not exist");
  if (!fs::is_directory(st)) throw UsageError(what + ": " + dir + " is not a directory");
  // Absolute: a batch hands the list to the runs it starts in other directories.
  const std::string abs = fs::absolute(dir).lexically_normal().string();
  for (const std::string& d : out) {
    if (d == abs) return;  // twice in a list: once is enough, and order is kept
  }
  out.push_back(abs);
}

}  // namespace

std::vector<std::string> backend_search_path(const std::vector<std::string>& flag_values, const std::string& env_value,
                                             const std::string& default_dir) {
  std::vector<std::string> out;
  if (!flag_values.empty()) {
    for (const std::string& v : flag_values) {
      const std::vector<std::string> dirs = text::split(v, ":");
      if (dirs.empty()) throw UsageError("--backend-dir: '" + v + "' names no directory");
      for (const std::string& d : dirs) add_checked(out, d, "--backend-dir");
    }
    return out;
  }
  for (const std::string& d : text::split(env_value, ":")) add_checked(out, d, "ZL_BACKEND_PATH");
  // The default is zlcore's own install: not the user's typo, so not checked
  // (a missing one simply holds no backends).
  const std::string def = fs::path(default_dir).lexically_normal().string();
  bool seen = false;
  for (const std::string& d : out) seen = seen || d == def;
  if (!seen) out.push_back(def);
  return out;
}

}  // namespace zl
