#include "zlcore/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace zl {
namespace {

void write_fully(int fd, const std::string& data, const std::string& path) {
  const char* p = data.data();
  size_t left = data.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno));
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
}

}  // namespace

void write_file_atomic(const std::string& path, const std::string& contents) {
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("cannot create " + tmp + ": " + std::strerror(errno));
  try {
    write_fully(fd, contents, tmp);
    if (fsync(fd) != 0) throw std::runtime_error("cannot sync " + tmp + ": " + std::strerror(errno));
  } catch (...) {
    close(fd);
    unlink(tmp.c_str());
    throw;
  }
  close(fd);
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    unlink(tmp.c_str());
    throw std::runtime_error("cannot rename " + tmp + " to " + path + ": " + std::strerror(e));
  }
}

namespace {

void append_once(const std::string& path, const std::string& record, bool sync) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
  // One write with O_APPEND: the record lands whole or (on a kill before the
  // call) not at all.
  ssize_t n = ::write(fd, record.data(), record.size());
  int e = errno;
  if (sync) fsync(fd);
  close(fd);
  if (n != static_cast<ssize_t>(record.size())) {
    throw std::runtime_error("cannot append to " + path + ": " + (n < 0 ? std::strerror(e) : "short write"));
  }
}

}  // namespace

void append_record(const std::string& path, const std::string& record) { append_once(path, record, true); }

void append_log_line(const std::string& path, const std::string& line) { append_once(path, line, false); }

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace zl
