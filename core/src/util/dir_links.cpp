#include "dir_links.hpp"

#include <filesystem>

#include "zlcore/errors.hpp"

namespace fs = std::filesystem;

namespace zl {

const char* const kOutputSubdirs[] = {"runs",  "warmup", "compile", "logs",  "leases", "workers",
                                      "sides", "tuner",  "plan",    "slurm", "shards", nullptr};

namespace {

std::string describe(const fs::path& link) {
  std::error_code ec;
  return link.string() + " (a link to " + fs::read_symlink(link, ec).string() + ")";
}

// A link whose target is a directory, or that dangles (a directory created
// later at its target would be written through it). A link to a file is
// refused where that file is written.
bool leads_to_directory_or_nothing(const fs::path& link) {
  std::error_code ec;
  const fs::file_status target = fs::status(link, ec);
  return fs::is_directory(target) || !fs::exists(target);
}

}  // namespace

std::string directory_link_under(const std::string& root) {
  for (const char* const* name = kOutputSubdirs; *name != nullptr; ++name) {
    const fs::path top = fs::path(root) / *name;
    std::error_code ec;
    if (fs::is_symlink(fs::symlink_status(top, ec))) return describe(top);
    if (!fs::is_directory(fs::symlink_status(top, ec))) continue;
    // The iterator does not follow directory links: a link is seen, never entered.
    fs::recursive_directory_iterator it(top, fs::directory_options::skip_permission_denied, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
      std::error_code lec;
      if (it->is_symlink(lec) && leads_to_directory_or_nothing(it->path())) return describe(it->path());
    }
  }
  return "";
}

void refuse_directory_links(const std::string& root, const std::string& prefix) {
  const std::string link = directory_link_under(root);
  if (link.empty()) return;
  throw UsageError(prefix + "--out " + root + " holds a symbolic link where zlcore keeps a directory: " + link +
                   "; zlcore does not follow links inside the directories it writes: put the directory itself "
                   "there, or use another --out");
}

}  // namespace zl
