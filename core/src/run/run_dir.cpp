// The run directory's name and its creation.
#include <sys/stat.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "../util/clock.hpp"
#include "stages.hpp"
#include "zlcore/errors.hpp"
#include "zlcore/sha256.hpp"

namespace zl::run_stage {

namespace fs = std::filesystem;

std::string stamp() { return utc_stamp_compact(); }

// An op named after a file or a node may hold anything its file name holds,
// and must neither leave runs/ nor exceed a file name's 255 bytes.
std::string safe_component(const std::string& op) {
  std::string out;
  for (char c : op) {
    const bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
    out += ok ? c : '_';
  }
  if (out.empty() || out.find_first_not_of('.') == std::string::npos) out = "op";
  return out.size() > 120 ? out.substr(0, 100) + "-" + sha256_hex(op).substr(0, 16) : out;
}

std::string make_run_dir(const RunOptions& opts, const std::string& run_id) {
  // No --out: the directory is named after the run, so the id in
  // run_identity.json, the header and the directory name are one string.
  std::string dir = opts.out_dir;
  if (dir.empty()) dir = (fs::path("runs") / run_id).string();
  fs::path p = fs::absolute(dir);
  std::error_code ec;
  fs::create_directories(p.parent_path(), ec);
  // Said here: mkdir below would only see the parent missing ("No such file
  // or directory") where the cause is a read-only or closed directory.
  if (ec) {
    throw UsageError("cannot create " + p.parent_path().string() + " for the run directory: " + ec.message() +
                     (opts.out_dir.empty() ? " (the default is runs/ in the working directory; choose --out)" : ""));
  }
  // mkdir, not create_directories: its EEXIST is the refusal.
  if (::mkdir(p.c_str(), 0755) != 0) {
    if (errno == EEXIST) {
      throw UsageError("run directory " + p.string() +
                       " already exists; refusing to overwrite it (choose another --out)");
    }
    throw UsageError("cannot create run directory " + p.string() + ": " + std::strerror(errno));
  }
  return p.lexically_normal().string();
}

}  // namespace zl::run_stage
