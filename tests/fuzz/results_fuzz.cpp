// A run's results rows (results.jsonl, one JSON object a line) as compare
// reads them, and the report written from them; and the table `zlcore run`
// prints from the same file. Compared with a fixed run and with a profiled one.
#include <cstddef>
#include <cstdint>
#include <fstream>

#include "compare_check.hpp"
#include "run/results_table.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const zl_fuzz::fs::path run = zl_fuzz::fresh("run");
  zl_fuzz::fs::copy_file(zl_fuzz::fixed_run() / "run_identity.json", run / "run_identity.json");
  zl_fuzz::put(run / "results.jsonl", zl_fuzz::text(data, size));
  try {
    (void)zl::format_results_table((run / "results.jsonl").string());
  } catch (const std::exception&) {
  }
  zl_fuzz::compare_against_fixed(run);
  // Against a profiled run too, so that rows with `kernels` reach the
  // report's "which kernel moved".
  static const zl_fuzz::fs::path profiled =
      zl_fuzz::fs::path(ZL_SOURCE_DIR) / "tests" / "compare" / "data" / "profiled" / "b";
  zl_fuzz::compare_against_fixed(run, profiled);
  return 0;
}
