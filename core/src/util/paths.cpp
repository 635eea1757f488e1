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

std::string embedded_suite_dir() { return (fs::path(data_dir()) / "suite").string(); }

std::string user_cache_dir() {
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v != nullptr ? v : "";
  };
  if (std::string d = env("ZL_CACHE_DIR"); !d.empty()) return d;
  if (std::string d = env("XDG_CACHE_HOME"); !d.empty()) return (fs::path(d) / "zlcore").string();
  if (std::string d = env("HOME"); !d.empty()) return (fs::path(d) / ".cache" / "zlcore").string();
  return "";
}

}  // namespace zl
