// Probe verdicts kept between commands, so that only a new or changed file
// costs a child process. One JSON file per backend directory under the cache
// directory (probes-<sha256 of the directory, 16 hex>.json), rewritten
// atomically when a verdict changed. A file is known by its path, size,
// mtime (ns) and inode (and device): rebuilding or replacing a backend
// changes one of them. A cache that does not parse, or was written by
// another zlcore version, is ignored as a whole.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "probe.hpp"

namespace zl::loader {

struct FileId {
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  uint64_t inode = 0;
  uint64_t device = 0;
  bool operator==(const FileId& o) const {
    return size == o.size && mtime_ns == o.mtime_ns && inode == o.inode && device == o.device;
  }
};

// stat(2) of the file, following a link (the loader loads what it points to).
std::optional<FileId> file_id(const std::string& path);

class ProbeCache {
 public:
  // Reads the cache of `backend_dir` from `cache_dir` ("" or "-": no cache).
  ProbeCache(std::string cache_dir, const std::string& backend_dir);

  // The verdict cached for this file as it is now. A time limit that ran out
  // counts only for a limit no longer than the one it ran out at.
  const ProbeVerdict* find(const std::string& path, const FileId& id, double timeout_s) const;
  void put(const std::string& path, const FileId& id, const ProbeVerdict& v, double timeout_s);
  // Drops the entries of files no longer present and writes the file if
  // anything changed. Failure to write is not an error: the next command
  // probes again. Returns the cache file's path ("" when there is none).
  std::string save(const std::vector<std::string>& present);

 private:
  struct Entry {
    FileId id;
    ProbeVerdict verdict;
    double timeout_s = 0;
  };
  std::string file_;  // "" when caching is off
  std::map<std::string, Entry> entries_;
  bool changed_ = false;
};

}  // namespace zl::loader
