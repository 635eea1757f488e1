// `zlcore run --replay-from SOURCE` on the example suite, as the replay
// cases of this folder start it: the run goes to tmp/B, HOME is tmp/home.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "zltest/temp_dir.hpp"
#include "zltest/zlcore_cli.hpp"

namespace bad_input {

inline zltest::Ran replay_run(const zltest::TempDir& tmp, const std::filesystem::path& source, const std::string& op,
                              const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args{"--backend-dir",
                                ZL_BUILD_PLUGIN_DIR,
                                "run",
                                "--backend",
                                "host",
                                "--flaggems-dir",
                                ZL_EXAMPLE_SUITE,
                                "--op",
                                op,
                                "--python",
                                "/usr/bin/python3",
                                "--replay-from",
                                source.string(),
                                "--out",
                                (tmp / "B").string(),
                                "--timeout",
                                "60"};
  args.insert(args.end(), extra.begin(), extra.end());
  return zltest::zlcore(args, tmp.path(), {{"HOME", (tmp / "home").string()}}, 120);
}

}  // namespace bad_input
