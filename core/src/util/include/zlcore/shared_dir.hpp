// Directories other users can write to. Whoever can write the backend
// directory can make zlcore run their code; whoever can write a batch's
// --out can plant links where zlcore will write or replace its records. The
// Vulkan and OpenCL loaders distrust such directories for an elevated
// process; zlcore says so, once, and goes on (docs/cli.md).
#pragma once

#include <string>

namespace zl {

// Why `dir` is open to other users ("writable by its group and by everyone
// (mode 0777) without the sticky bit"), or "" when it is not, or does not
// exist. A group- or world-writable directory with the sticky bit set (like
// /tmp) does not count: there others cannot remove or rename our files.
std::string writable_by_others(const std::string& dir);

// One line on stderr, at most once per directory per process, when
// writable_by_others(dir) says something. `what` names the directory's role
// ("backend directory", "batch --out directory").
void warn_if_writable_by_others(const std::string& dir, const std::string& what);

}  // namespace zl
