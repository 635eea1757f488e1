// A scratch directory of one test, made fresh and removed with everything in
// it when the test ends, however it ends.
#pragma once

#include <filesystem>
#include <string>

namespace zltest {

namespace fs = std::filesystem;

class TempDir {
 public:
  // Made under the system's temporary directory as <prefix>-XXXXXX; throws
  // when it cannot be made.
  explicit TempDir(const std::string& prefix = "zl-test");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }
  fs::path operator/(const std::string& name) const { return path_ / name; }

 private:
  fs::path path_;
};

}  // namespace zltest
