// What every bench binary shares: where the build put things, and a scratch
// directory on the same file system as the build (not /tmp, which may be a
// tmpfs where fsync costs nothing and the numbers would flatter zlcore).
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

namespace zl::bench {

inline std::string scratch_dir(const std::string& name) {
  namespace fs = std::filesystem;
  fs::path p = fs::path(ZL_BENCH_SCRATCH) / (name + "." + std::to_string(getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p.string();
}

inline void drop_dir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

}  // namespace zl::bench
