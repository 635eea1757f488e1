// What the fuzz targets share: a scratch directory of their own (several
// targets run side by side) and a file written there from the fuzz bytes,
// for the readers that take a path, as zlcore's do.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace zl_fuzz {

namespace fs = std::filesystem;

// A directory for this process, made on first use and kept until it ends
// (libFuzzer exits through exit(), so the static is destroyed then).
class Scratch {
 public:
  Scratch() {
    std::string tmpl = (fs::temp_directory_path() / "zl-fuzz-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) std::abort();
    path_ = tmpl;
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

inline const fs::path& scratch() {
  static Scratch s;
  return s.path();
}

inline std::string text(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// Writes `contents` to `file`, creating its directory.
inline void put(const fs::path& file, const std::string& contents) {
  fs::create_directories(file.parent_path());
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  if (!out) std::abort();
}

// A fresh directory under the scratch one, emptied at each input.
inline fs::path fresh(const std::string& name) {
  const fs::path dir = scratch() / name;
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir);
  return dir;
}

}  // namespace zl_fuzz
