#include "access_refusal.hpp"

#include <cerrno>
#include <filesystem>

#include "zlcore/atomic_file.hpp"

namespace zl {
namespace {

// Refused by the system, or a path no system call can use as given (a loop
// of links, a name past the system's limit): the user's to fix either way.
bool refused(int error_number) {
  return error_number == EACCES || error_number == EPERM || error_number == EROFS || error_number == ELOOP ||
         error_number == ENAMETOOLONG;
}

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
  // A name past the system's limit is shown by its start.
  auto shown = [](const std::string& p) { return p.size() > 200 ? p.substr(0, 160) + "..." : p; };
  std::string out = done + " " + shown(fe->path1().string());
  if (!fe->path2().empty()) out += " (and " + shown(fe->path2().string()) + ")";
  return out + ": " + reason;
}

}  // namespace zl
