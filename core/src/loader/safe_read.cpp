#include "safe_read.hpp"

#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace zl::loader {
namespace {

// Strings are read a page at a time, never past the page the NUL may end
// in: a short string at the end of a mapping must not read as unreadable.
constexpr size_t kPage = 4096;

// process_vm_readv can be refused (seccomp, as in a container's default
// profile, or a kernel without it); then a pipe does the same job: write()
// of an unmapped buffer fails with EFAULT.
std::atomic<bool> g_vm_refused{false};

// write(2) itself, not the libc symbol: a sanitizer's interceptor of
// write() checks the source buffer against its own map of the process and
// aborts on memory it calls invalid, which is exactly what a lying backend
// points at. Only the kernel's answer (EFAULT) may judge these bytes.
ssize_t kernel_write(int fd, const void* buf, size_t n) { return ::syscall(SYS_write, fd, buf, n); }

bool copy_by_vm(const void* from, void* to, size_t n, bool* refused) {
  iovec local{to, n};
  iovec remote{const_cast<void*>(from), n};
  const ssize_t got = ::process_vm_readv(::getpid(), &local, 1, &remote, 1, 0);
  if (got == static_cast<ssize_t>(n)) return true;
  *refused = got < 0 && errno != EFAULT && errno != ENOMEM;
  return false;
}

bool copy_by_pipe(const void* from, void* to, size_t n) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return false;
  bool ok = true;
  const auto* src = static_cast<const char*>(from);
  auto* dst = static_cast<char*>(to);
  // A chunk well under the pipe's capacity, so write() never blocks.
  constexpr size_t kChunk = 4096;
  for (size_t done = 0; ok && done < n;) {
    const size_t want = std::min(kChunk, n - done);
    ssize_t w;
    do {
      w = kernel_write(fds[1], src + done, want);
    } while (w < 0 && errno == EINTR);
    if (w != static_cast<ssize_t>(want)) {
      ok = false;
      break;
    }
    for (size_t got = 0; got < want;) {
      const ssize_t r = ::read(fds[0], dst + done + got, want - got);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) {
        ok = false;
        break;
      }
      got += static_cast<size_t>(r);
    }
    done += want;
  }
  ::close(fds[0]);
  ::close(fds[1]);
  return ok;
}

}  // namespace

void use_pipe_copies(bool on) { g_vm_refused.store(on, std::memory_order_relaxed); }

bool copy_from_backend(const void* from, void* to, size_t n) {
  if (n == 0) return true;
  if (from == nullptr) return false;
  // Wrapping around the address space is never a real object.
  if (reinterpret_cast<uintptr_t>(from) + n < reinterpret_cast<uintptr_t>(from)) return false;
  if (!g_vm_refused.load(std::memory_order_relaxed)) {
    bool refused = false;
    if (copy_by_vm(from, to, n, &refused)) return true;
    if (!refused) return false;
    g_vm_refused.store(true, std::memory_order_relaxed);
  }
  return copy_by_pipe(from, to, n);
}

std::optional<std::string> read_backend_string(const char* p) {
  if (p == nullptr) return std::nullopt;
  std::string out;
  char buf[kPage];
  auto at = reinterpret_cast<uintptr_t>(p);
  while (out.size() <= kMaxBackendString) {
    const size_t in_page = kPage - at % kPage;
    const size_t want = std::min(in_page, kMaxBackendString + 1 - out.size());
    // The address as the backend gave it, for the bounded copy alone.
    if (!copy_from_backend(reinterpret_cast<const void*>(at), buf, want)) {  // NOLINT(performance-no-int-to-ptr)
      return std::nullopt;
    }
    const void* nul = std::memchr(buf, '\0', want);
    if (nul != nullptr) {
      out.append(buf, static_cast<const char*>(nul) - buf);
      return out;
    }
    out.append(buf, want);
    at += want;
  }
  return std::nullopt;  // longer than kMaxBackendString
}

std::string pointer_words(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%p", p);
  return buf;
}

}  // namespace zl::loader
