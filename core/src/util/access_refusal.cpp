#include "access_refusal.hpp"

#include <cerrno>
#include <filesystem>

#include "zlcore/atomic_file.hpp"

namespace zl {
namespace {

bool refused(int error_number) { return error_number == EACCES || error_number == EPERM || error_number == EROFS; }

}  // namespace

std::string access_refusal(const std::exception& e) {
  if (const auto* w = dynamic_cast<const WriteError*>(&e)) return refused(w->error_number()) ? w->what() : "";
  const auto* fe = dynamic_cast<const std::filesystem::filesystem_error*>(&e);
  if (fe == nullptr || !refused(fe->code().value())) return "";
  // libstdc++ says "filesystem error: <what was done>: <reason> [<path>]"; the
  // path goes after what was done, where a sentence puts it.
  std::string what = fe->what();
  const std::string prefix = "filesystem error: ";
  if (what.rfind(prefix, 0) == 0) what = what.substr(prefix.size());
  const std::string reason = fe->code().message();
  const size_t at = what.find(": " + reason);
  std::string done = at == std::string::npos ? "use" : what.substr(0, at);
  // A stat(2) refused, as std::filesystem names it, in words.
  if (done == "status" || done == "symlink_status") done = "look at";
  if (done.rfind("cannot ", 0) != 0) done = "cannot " + done;
  std::string out = done + " " + fe->path1().string();
  if (!fe->path2().empty()) out += " (and " + fe->path2().string() + ")";
  return out + ": " + reason;
}

}  // namespace zl
