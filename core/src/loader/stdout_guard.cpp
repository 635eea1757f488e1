#include "stdout_guard.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <mutex>

#include "../util/printable.hpp"

namespace zl::loader {
namespace {

// Shown of what a backend wrote: enough to recognise it.
constexpr size_t kShown = 200;

std::recursive_mutex& stdout_mutex() {
  static auto* m = new std::recursive_mutex();
  return *m;
}

int scratch_file() {
  int fd = ::memfd_create("zlcore-backend-stdout", MFD_CLOEXEC);
  if (fd >= 0) return fd;
  std::FILE* f = std::tmpfile();  // no memfd: an unlinked temporary file
  if (f == nullptr) return -1;
  fd = ::fcntl(fileno(f), F_DUPFD_CLOEXEC, 3);
  std::fclose(f);
  return fd;
}

// Everything buffered for stdout goes where fd 1 points now.
void flush_stdout() {
  std::cout.flush();
  std::fflush(stdout);
}

}  // namespace

StdoutGuard::StdoutGuard(std::string who, const char* call) : who_(std::move(who)), call_(call) {
  stdout_mutex().lock();
  flush_stdout();
  capture_ = scratch_file();
  saved_ = capture_ >= 0 ? ::fcntl(1, F_DUPFD_CLOEXEC, 3) : -1;
  if (saved_ < 0 || ::dup2(capture_, 1) < 0) {
    // No scratch file to be had: the call goes ahead unguarded.
    if (saved_ >= 0) ::close(saved_);
    if (capture_ >= 0) ::close(capture_);
    saved_ = capture_ = -1;
  }
}

StdoutGuard::~StdoutGuard() {
  if (saved_ >= 0) {
    flush_stdout();  // what the backend left in stdio's buffer is the backend's
    ::dup2(saved_, 1);
    ::close(saved_);
    struct stat st {};
    if (::fstat(capture_, &st) == 0 && st.st_size > 0) {
      std::string head(kShown, '\0');
      const ssize_t n = ::pread(capture_, head.data(), head.size(), 0);
      head.resize(n > 0 ? static_cast<size_t>(n) : 0);
      std::fprintf(stderr, "zlcore: %s wrote %lld bytes on stdout in %s; kept off zlcore's stdout: \"%s%s\"\n",
                   who_.c_str(), static_cast<long long>(st.st_size), call_, printable(head).c_str(),
                   static_cast<size_t>(st.st_size) > head.size() ? "..." : "");
    }
  }
  if (capture_ >= 0) ::close(capture_);
  stdout_mutex().unlock();
}

}  // namespace zl::loader
