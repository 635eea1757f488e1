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
  // The child's "note <text>" lines, in order (the loader's probe says none;
  // the conformance kit's rule children say why a rule was skipped).
  std::vector<std::string> notes;
};

// The hidden command a child runs on a file: `<program> <verb...> FILE`.
// The loader's probe by default; the conformance kit runs each of its rules
// in a child the same way, so a crash or a hang there has the same words.
inline const std::vector<std::string>& probe_verb() {
  static const std::vector<std::string> verb{"__probe-backend"};
  return verb;
}

// One verdict per file, in the same order.
std::vector<ProbeVerdict> probe_files(const std::vector<std::string>& files, const std::string& program,
                                      double timeout_s, const std::vector<std::string>& verb = probe_verb());

}  // namespace zl::loader
