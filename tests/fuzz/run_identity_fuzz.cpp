// run_identity.json as compare reads it (the caliber of a run), against a
// fixed run, with the report written from it.
#include <cstddef>
#include <cstdint>

#include "compare_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const zl_fuzz::fs::path run = zl_fuzz::fresh("run");
  zl_fuzz::put(run / "run_identity.json", zl_fuzz::text(data, size));
  zl_fuzz::fs::copy_file(zl_fuzz::fixed_run() / "results.jsonl", run / "results.jsonl");
  zl_fuzz::compare_against_fixed(run);
  return 0;
}
