#include "zlcore/atomic_file.hpp"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>

#include "clock.hpp"
#include "file_kind.hpp"
#include "zlcore/errors.hpp"

namespace zl {

WriteError::WriteError(const std::string& what, int error_number)
    : std::runtime_error(what + ": " + std::strerror(error_number)), error_number_(error_number) {}

bool is_out_of_space(const std::exception& e) {
  const auto* w = dynamic_cast<const WriteError*>(&e);
  if (w != nullptr) return w->error_number() == ENOSPC || w->error_number() == EDQUOT;
  const auto* fe = dynamic_cast<const std::filesystem::filesystem_error*>(&e);
  return fe != nullptr && (fe->code() == std::errc::no_space_on_device || fe->code().value() == EDQUOT);
}

namespace {

void write_fully(int fd, const std::string& data, const std::string& path) {
  const char* p = data.data();
  size_t left = data.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw WriteError("cannot write " + path, errno);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
}

std::string random_hex() {
  unsigned char bytes[8] = {};
  if (getrandom(bytes, sizeof bytes, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof bytes)) {
    // No entropy yet (early boot): the exclusive create below still refuses
    // a name someone planted; this only makes a clash likelier.
    const uint64_t mix = static_cast<uint64_t>(getpid()) * 0x9E3779B97F4A7C15ull ^
                         static_cast<uint64_t>(reinterpret_cast<uintptr_t>(&bytes));
    std::memcpy(bytes, &mix, sizeof bytes);
  }
  char out[17];
  for (size_t i = 0; i < sizeof bytes; ++i) std::snprintf(out + 2 * i, 3, "%02x", bytes[i]);
  return out;
}

std::string dir_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// A temporary beside `path`: .<name>.<random>.tmp, created with O_EXCL and
// O_NOFOLLOW, so a name planted in advance (a link to someone's file) is
// never opened; another name is drawn instead.
int create_temp_beside(const std::string& path, std::string* tmp) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  for (int attempt = 0; attempt < 100; ++attempt) {
    *tmp = dir + "." + name + "." + random_hex() + ".tmp";
    int fd = ::open(tmp->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd >= 0) return fd;
    if (errno != EEXIST) throw WriteError("cannot create " + *tmp, errno);
  }
  throw std::runtime_error("cannot create a temporary file beside " + path + ": every name tried exists");
}

// After a rename the new name lives in the directory: sync it too, or a
// power cut can bring back the old file. Some file systems cannot sync a
// directory (EINVAL); the file itself is synced either way.
void sync_directory(const std::string& path) {
  int fd = ::open(dir_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

void write_file_atomic(const std::string& path, const std::string& contents) {
  // The rename below replaces whatever `path` names: a FIFO or a device there
  // (an --out or --html of /dev/null, as root) would be destroyed. A regular
  // file, a link (replaced itself, never followed) or nothing may be.
  struct stat st {};
  if (lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
    throw UsageError("cannot write " + path + ": it is " + not_a_regular_file(path) +
                     ", and zlcore writes a file there only in place of a file; name another path");
  }
  std::string tmp;
  int fd = create_temp_beside(path, &tmp);
  try {
    write_fully(fd, contents, tmp);
    if (fsync(fd) != 0) throw WriteError("cannot sync " + tmp, errno);
  } catch (...) {
    close(fd);
    unlink(tmp.c_str());
    throw;
  }
  close(fd);
  // rename replaces a link at `path` itself, never the file it points to.
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    unlink(tmp.c_str());
    throw WriteError("cannot rename " + tmp + " to " + path, e);
  }
  sync_directory(path);
}

bool create_file_exclusive(const std::string& path, const std::string& contents) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) {
    if (errno == EEXIST) return false;
    throw WriteError("cannot create " + path, errno);
  }
  try {
    write_fully(fd, contents, path);
    if (fsync(fd) != 0) throw WriteError("cannot sync " + path, errno);
  } catch (...) {
    close(fd);
    unlink(path.c_str());
    throw;
  }
  close(fd);
  sync_directory(path);
  return true;
}

int open_for_append(const std::string& path) {
  // O_NONBLOCK: a FIFO planted at the path must not block us until someone
  // reads it (it fails the regular-file check below instead).
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
  if (fd < 0) {
    const int e = errno;
    if (e == ELOOP) {
      throw std::runtime_error("cannot append to " + path +
                               ": it is a symbolic link, and zlcore does not follow links for files it writes");
    }
    throw WriteError("cannot append to " + path, e);
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw std::runtime_error("cannot append to " + path + ": not a regular file");
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

namespace {

void append_once(const std::string& path, const std::string& record, bool sync) {
  int fd = open_for_append(path);
  // One write with O_APPEND: the record lands whole or (on a kill before the
  // call) not at all.
  const off_t before = ::lseek(fd, 0, SEEK_END);
  ssize_t n = ::write(fd, record.data(), record.size());
  int e = errno;
  // A short write is what a file system that just filled up gives. Its part
  // of a record is cut off again: the caller retries once room is freed, and
  // the retry must not land behind half of itself as one garbled line.
  const bool shortened = n >= 0 && n != static_cast<ssize_t>(record.size());
  if (shortened && before >= 0) (void)::ftruncate(fd, before);
  if (sync) fsync(fd);
  close(fd);
  if (n < 0) throw WriteError("cannot append to " + path, e);
  if (shortened) throw WriteError("cannot append to " + path, ENOSPC);
}

}  // namespace

void append_record(const std::string& path, const std::string& record) { append_once(path, record, true); }

void append_log_line(const std::string& path, const std::string& line) { append_once(path, line, false); }

void append_log_line_or_warn(const std::string& path, const std::string& line, const std::string& who) {
  try {
    append_once(path, line, false);
  } catch (const std::exception& e) {
    static std::mutex m;
    static auto* said = new std::set<std::string>();  // leaked: used until exit
    std::lock_guard<std::mutex> lock(m);
    if (said->insert(e.what()).second) std::cerr << who << ": " << e.what() << "\n";
  }
}

std::string read_file(const std::string& path) { return read_regular_file(path); }

std::string keep_copy_aside(const std::string& path, const std::string& text) {
  const std::string base = path + ".bak-" + utc_now_format("%Y%m%dT%H%M%SZ");
  for (int n = 1; n < 1000; ++n) {
    const std::string name = n == 1 ? base : base + "-" + std::to_string(n);
    if (create_file_exclusive(name, text)) return name;
  }
  throw std::runtime_error("cannot keep a copy of " + path + ": every backup name tried exists");
}

}  // namespace zl
