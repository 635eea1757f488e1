#include "zlcore/paths.hpp"

#include <cstdlib>
#include <filesystem>

namespace zl {
namespace fs = std::filesystem;

std::string self_exe_dir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return ".";
  return exe.parent_path().string();
}

static fs::path prefix() { return fs::path(self_exe_dir()).parent_path(); }

std::string default_backend_dir() { return (prefix() / ZL_PLUGIN_SUBDIR).string(); }

std::string data_dir() {
  const char* env = std::getenv("ZL_DATA_DIR");
  if (env != nullptr && *env != '\0') return env;
  return (prefix() / ZL_DATA_SUBDIR).string();
}

std::string python_plugin_dir() { return (fs::path(data_dir()) / "python").string(); }

}  // namespace zl
