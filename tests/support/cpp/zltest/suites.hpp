// FlagGems-layout suites a test makes in its scratch directory: a fixture
// suite (tests/fixtures/README.md) copied with one more op, added the way
// FlagGems adds one. The Python tests have the same in zltest.suites.
#pragma once

#include <filesystem>
#include <string>

namespace zltest {

namespace fs = std::filesystem;

// A copy of the suite `src` at `dest` (links followed) with `op`'s marker
// registered in pytest.ini ("operator <description, else op>") and
// `test_source` as benchmark/test_<op>.py. A pythonpath that leads out of
// `src` (the fault suite finds the example's library so) is made absolute,
// so the copy finds the same library. Returns `dest`.
fs::path suite_with_op(const fs::path& src, const fs::path& dest, const std::string& op, const std::string& test_source,
                       const std::string& description = "");

}  // namespace zltest
