#include "file_kind.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace zl {
namespace {

std::string kind_of(mode_t mode) {
  if (S_ISREG(mode)) return "";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// The link's final target, for the message; the link itself when unreadable.
std::string target_of(const std::string& path) {
  char buf[4096];
  char* real = ::realpath(path.c_str(), buf);
  return real ? std::string(real) : path;
}

}  // namespace

std::string not_a_regular_file(const std::string& path) {
  struct stat own {};
  if (::lstat(path.c_str(), &own) != 0) {
    return errno == ENOENT || errno == ENOTDIR ? "no such file"
                                               : "not readable (" + std::string(std::strerror(errno)) + ")";
  }
  if (!S_ISLNK(own.st_mode)) return kind_of(own.st_mode);
  struct stat target {};
  if (::stat(path.c_str(), &target) != 0) return "a dangling link";
  const std::string kind = kind_of(target.st_mode);
  return kind.empty() ? "" : "a link to " + kind + " (" + target_of(path) + ")";
}

std::string read_regular_file(const std::string& path, size_t max_bytes) {
  // O_NONBLOCK: opening a FIFO with no writer would otherwise wait forever.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    // A socket cannot be opened at all (ENXIO): say what it is, not the errno.
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
      throw std::runtime_error(path + " is " + kind_of(st.st_mode));
    }
    throw std::runtime_error("cannot read " + path + ": " + std::strerror(e));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const std::string kind = kind_of(st.st_mode);
    ::close(fd);
    throw std::runtime_error(path + " is " + (kind.empty() ? "not a regular file" : kind));
  }
  std::string text;
  char buf[65536];
  for (;;) {
    // A file that grows while it is read (or lies about its size) stops
    // at the bound all the same.
    if (text.size() > max_bytes) {
      ::close(fd);
      throw std::runtime_error(path + " is larger than " + std::to_string(max_bytes >> 20) +
                               " MiB, more than zlcore reads from one file");
    }
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      const int e = errno;
      ::close(fd);
      throw std::runtime_error("cannot read " + path + ": " + std::strerror(e));
    }
    text.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return text;
}

}  // namespace zl
