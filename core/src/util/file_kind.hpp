// What a path names when a reader expects a regular file, in words a user
// can act on: a FIFO or a device given where a file was asked for must not
// be called "no such file", and reading it must not block or never end.
#pragma once

#include <string>

namespace zl {

// "" when `path` is a regular file (or a link to one); else what it is:
// "no such file", "a directory", "a FIFO (named pipe)", "a character device",
// "a block device", "a socket", "a link to a character device (/dev/zero)",
// "a dangling link", "not readable (Permission denied)".
std::string not_a_regular_file(const std::string& path);

// The whole of a regular file. Opens without blocking (O_NONBLOCK), checks
// what it opened, and throws std::runtime_error "<path> is <what>" for
// anything but a regular file, "cannot read <path>: <reason>" otherwise.
std::string read_regular_file(const std::string& path);

}  // namespace zl
