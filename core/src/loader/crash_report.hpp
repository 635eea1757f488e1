// A backend that passed its probe can still die later, in process: in a
// second enumerate, a state query, its initialize or shutdown. The process
// cannot go on after that (the backend's memory and locks are in an unknown
// state, and a longjmp out of foreign code is not allowed by the ABI), so
// zlcore says which backend died in which call, in one line on stderr, and
// exits with kExitBackendCrashed (docs/cli.md) instead of dying of the
// signal in silence.
//
// Why a handler and not a child per call: the calls in process use what
// the backend's initialize opened here (driver handles), which a child would
// have to open again on every call, and `devices --serve-state` answers
// each line in a pipe round trip. The handler is async-signal-safe (the line
// is built before the call; write and _exit only) and claims a fault only
// on a thread that is inside a backend call: zlcore's own faults still reach
// the handler that was there before (a core dump, the sanitizer's report).
#pragma once

#include <string>

namespace zl::loader {

// The exit code after a backend died of a signal in process (docs/cli.md,
// "Exit codes"); beside the others of zlcore/errors.hpp in meaning, here
// because only this handler exits with it.
constexpr int kExitBackendCrashed = 9;

// Installs the handler for SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT and
// SIGSYS once. The probe child never calls this: there the signal itself is
// the report its parent reads.
void install_backend_crash_report();

// For its lifetime, marks the calling thread as inside `call` of `who` ("
// backend 'x' (/path/x.so)"). Gives the thread an alternate signal stack
// when it has none, so a backend that overflows its stack is reported too.
class InBackendCall {
 public:
  InBackendCall(const std::string& who, const char* call);
  ~InBackendCall();
  InBackendCall(const InBackendCall&) = delete;
  InBackendCall& operator=(const InBackendCall&) = delete;

  // Read by the signal handler only.
  const std::string& head() const { return head_; }

 private:
  std::string head_;  // "zlcore: backend 'x' (/path/x.so) crashed in enumerate_devices: "
  InBackendCall* outer_;
  void* altstack_ = nullptr;
};

// "backend 'x' (/path/x.so)": how the reports name a backend.
std::string backend_words(const std::string& name, const std::string& path);

}  // namespace zl::loader
