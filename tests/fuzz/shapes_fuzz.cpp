// A shape file (--shape-file / SHAPE_FILE, FlagGems' shapes.yaml layout) as
// preflight reads it before any child starts.
#include <cstddef>
#include <cstdint>
#include <exception>

#include "fuzz_util.hpp"
#include "zlcore/provider.hpp"
#include "zlcore/run.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const zl_fuzz::fs::path suite = zl_fuzz::scratch() / "suite";
  zl_fuzz::fs::create_directories(suite / "benchmark");
  // A FlagGems-layout suite registers the options a shape file needs; without
  // them preflight refuses the suite before it reads the file.
  zl_fuzz::put(suite / "benchmark" / "conftest.py",
               "def pytest_addoption(parser):\n"
               "    for name in ('--level', '--mode', '--shape_file'):\n"
               "        parser.addoption(name)\n");
  const zl_fuzz::fs::path file = zl_fuzz::scratch() / "shapes.yaml";
  zl_fuzz::put(file, zl_fuzz::text(data, size));
  zl::FlagGemsProvider provider(suite.string());
  zl::TestTarget target;
  target.op = "abs";
  zl::RunOptions options;
  options.shape_mode = "file";
  options.shape_file = file.string();
  try {
    zl::preflight(provider, target, options);
  } catch (const std::exception&) {
    // Refusing a file that holds no shapes is preflight's job.
  }
  return 0;
}
