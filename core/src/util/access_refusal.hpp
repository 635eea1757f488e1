// A place the system will not let zlcore write or read (EACCES, EPERM,
// EROFS: a directory of another user, a read-only mount), or a path it
// cannot use as given (ELOOP, ENAMETOOLONG: a loop of links, a name past
// the limit), is the user's to fix, like a bad flag: main turns it into one
// line and exit 2, never an "internal error".
#pragma once

#include <exception>
#include <string>

namespace zl {

// From a WriteError or a std::filesystem error: one line naming the path and
// why ("cannot create directories /srv/out: Permission denied"); "" for any
// other error.
std::string access_refusal(const std::exception& e);

}  // namespace zl
