// Where zlcore finds its plugins and data: relative to its own executable, in
// the build tree and in an install alike, so no path is baked in.
#pragma once

#include <string>

namespace zl {

// Directory holding the running executable.
std::string self_exe_dir();
// <prefix>/lib/zlcore/plugins, <prefix> being the executable's parent dir.
std::string default_backend_dir();
// <prefix>/share/zlcore, or $ZL_DATA_DIR when set.
std::string data_dir();
// <data_dir>/python: put first on the pytest child's PYTHONPATH.
std::string python_plugin_dir();
// <data_dir>/suite: the example suite (examples/suite), zlcore's embedded
// default when no FlagGems directory is given.
std::string embedded_suite_dir();
// Where zlcore keeps what it can recompute (the suite index): $ZL_CACHE_DIR,
// else $XDG_CACHE_HOME/zlcore, else $HOME/.cache/zlcore; empty when none of
// those is set, and then nothing is cached.
std::string user_cache_dir();

}  // namespace zl
