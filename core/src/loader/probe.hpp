// The parent side of probing: each backend file is opened and enumerated
// once by `<program> __probe-backend FILE` in a child of its own, with a time
// limit, several at a time; the verdict says whether the file may be loaded
// in process and, if not, what happened to the child and where.
#pragma once

#include <string>
#include <vector>

namespace zl::loader {

struct ProbeVerdict {
  bool ok = false;
  // Why not: the loader's own reason ("no entry symbol ..."), or what the
  // child died of and where ("exited with 0 during load", "killed by SIGSEGV
  // in enumerate_devices", "aborted (SIGABRT) in the entry point", "no answer
  // in 10 s in enumerate_devices").
  std::string reason;
  bool timed_out = false;  // the reason is the time limit
  bool cacheable = true;   // false when the probe itself could not run
  double seconds = 0;
};

// One verdict per file, in the same order.
std::vector<ProbeVerdict> probe_files(const std::vector<std::string>& files, const std::string& program,
                                      double timeout_s);

}  // namespace zl::loader
