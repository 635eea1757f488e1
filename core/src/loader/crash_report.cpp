#include "crash_report.hpp"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

namespace zl::loader {
namespace {

// initial-exec: reading it in a signal handler must not allocate.
__attribute__((tls_model("initial-exec"))) thread_local InBackendCall* t_call = nullptr;

constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGSYS};
struct sigaction g_previous[NSIG];

constexpr size_t kAltStack = 64 * 1024;

void write_all(const char* p, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(2, p, n);
    if (w <= 0) return;
    p += w;
    n -= static_cast<size_t>(w);
  }
}

// The probe's words for a signal (probe.cpp), from a fixed table.
const char* signal_words(int sig) {
  switch (sig) {
    case SIGSEGV: return "killed by SIGSEGV";
    case SIGBUS: return "killed by SIGBUS";
    case SIGILL: return "killed by SIGILL";
    case SIGFPE: return "killed by SIGFPE";
    case SIGABRT: return "aborted (SIGABRT)";
    case SIGSYS: return "killed by SIGSYS";
    default: return "killed by a signal";
  }
}

extern "C" void on_fatal_signal(int sig, siginfo_t* info, void*) {
  const InBackendCall* call = t_call;
  if (call == nullptr) {
    // Not a backend's: whoever handled it before us does, as if we were not
    // here. A fault returns to the faulting instruction and meets that
    // handler; a sent signal is sent again.
    ::sigaction(sig, &g_previous[sig], nullptr);
    if (info == nullptr || info->si_code <= 0 || sig == SIGABRT) ::raise(sig);
    return;
  }
  write_all(call->head().data(), call->head().size());
  const char* words = signal_words(sig);
  write_all(words, std::strlen(words));
  write_all("\n", 1);
  ::_exit(kExitBackendCrashed);
}

}  // namespace

std::string backend_words(const std::string& name, const std::string& path) {
  return "backend '" + name + "'" + (path.empty() ? "" : " (" + path + ")");
}

void install_backend_crash_report() {
  static bool done = false;
  if (done) return;
  done = true;
  struct sigaction sa {};
  sa.sa_sigaction = on_fatal_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  for (int sig : kSignals) ::sigaction(sig, &sa, &g_previous[sig]);
}

InBackendCall::InBackendCall(const std::string& who, const char* call)
    : head_("zlcore: " + who + " crashed in " + call + ": "), outer_(t_call) {
  stack_t current{};
  if (::sigaltstack(nullptr, &current) == 0 && (current.ss_flags & SS_DISABLE) != 0) {
    void* mem = ::mmap(nullptr, kAltStack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem != MAP_FAILED) {
      stack_t mine{};
      mine.ss_sp = mem;
      mine.ss_size = kAltStack;
      if (::sigaltstack(&mine, nullptr) == 0) {
        altstack_ = mem;
      } else {
        ::munmap(mem, kAltStack);
      }
    }
  }
  t_call = this;
}

InBackendCall::~InBackendCall() {
  t_call = outer_;
  if (altstack_ != nullptr) {
    stack_t off{};
    off.ss_flags = SS_DISABLE;
    ::sigaltstack(&off, nullptr);
    ::munmap(altstack_, kAltStack);
  }
}

}  // namespace zl::loader
