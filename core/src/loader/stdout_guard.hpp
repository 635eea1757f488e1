// zlcore's stdout is its table or its JSON (`devices --json`); a backend
// that prints there (a vendor library's banner, a debug printf) would
// corrupt it. Around every call into a backend, fd 1 points at a scratch
// file instead; afterwards zlcore's stdout is back, and what the backend
// wrote is shown on stderr in one line that names the backend and the call.
// One guard at a time in the process (a mutex): fd 1 is the process's.
#pragma once

#include <string>

namespace zl::loader {

class StdoutGuard {
 public:
  // `who`: backend_words() of the backend; `call`: "enumerate_devices", ...
  StdoutGuard(std::string who, const char* call);
  ~StdoutGuard();
  StdoutGuard(const StdoutGuard&) = delete;
  StdoutGuard& operator=(const StdoutGuard&) = delete;

 private:
  std::string who_;
  const char* call_;
  int saved_ = -1;    // zlcore's own stdout while the guard holds
  int capture_ = -1;  // where the backend's writes land
};

}  // namespace zl::loader
