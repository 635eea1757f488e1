// What a path names when a reader expects a regular file, in words a user
// can act on: a FIFO or a device given where a file was asked for must not
// be called "no such file", and reading it must not block or never end.
#pragma once

#include <cstddef>
#include <string>

namespace zl {

// "" when `path` is a regular file (or a link to one); else what it is:
// "no such file", "a directory", "a FIFO (named pipe)", "a character device",
// "a block device", "a socket", "a link to a character device (/dev/zero)",
// "a dangling link", "not readable (Permission denied)".
std::string not_a_regular_file(const std::string& path);

// The most zlcore reads from one file: far above any record it writes, far
// below what would exhaust memory.
inline constexpr size_t kMaxReadBytes = size_t{256} << 20;

// The whole of a regular file. Opens without blocking (O_NONBLOCK), checks
// what it opened, and throws std::runtime_error "<path> is <what>" for
// anything but a regular file, "<path> is larger than N MiB, ..." past
// `max_bytes`, "cannot read <path>: <reason>" otherwise. Every reader of a
// file named by a user or found in a directory goes through here.
std::string read_regular_file(const std::string& path, size_t max_bytes = kMaxReadBytes);

}  // namespace zl
