// Which Python runs pytest. A first run often meets a `python3` without
// pytest (a virtualenv, a distribution's own, a module system's) while the
// system one has it; zlcore then names what it found and why it moved on, so
// the run header and the identity say which interpreter measured.
#pragma once

#include <string>
#include <vector>

namespace zl {

struct PythonChoice {
  std::string command;     // what the child is started with (as given, or the candidate's name)
  std::string path;        // the executable it resolved to (sys.executable)
  std::string version;     // "3.11.2"
  bool requested = false;  // from --python, not chosen by zlcore
  // Candidates passed over, one phrase each: "python3 (/opt/venv/bin/python3,
  // Python 3.12.1) cannot import pytest".
  std::vector<std::string> passed_over;
};

// The interpreters tried when --python is not given, in order.
const std::vector<std::string>& python_candidates();

// `requested` non-empty: that interpreter must run and find pytest and
// `modules` (a torch-device backend's run needs torch). Empty: the first
// candidate that does. Throws PreflightError (check python) naming every
// interpreter tried, what it cannot import and the --python flag.
PythonChoice choose_python(const std::string& requested, const std::vector<std::string>& modules = {});

// The modules beyond pytest a run on `torch_device` (a backend's) needs in
// its interpreter: torch for a device torch drives, none on the host.
std::vector<std::string> modules_for_device(const std::string& torch_device);

}  // namespace zl
