// run_identity.json as compare reads it (the caliber of a run and its
// provenance), against a fixed run, with the report written from it; then
// as one run of a batch whose other runs are fixed, so that the provenance
// block also sums a fact over runs that disagree or did not record it.
#include <cstddef>
#include <cstdint>

#include "compare_check.hpp"

namespace {

// The compare tests' batch_a, copied once per process: an input replaces
// the identity of its first run (abs) only.
const zl_fuzz::fs::path& batch_a() {
  static const zl_fuzz::fs::path dir = [] {
    const zl_fuzz::fs::path d = zl_fuzz::fresh("batch_a");
    zl_fuzz::fs::copy(zl_fuzz::fs::path(ZL_SOURCE_DIR) / "tests" / "compare" / "data" / "batch_a", d,
                      zl_fuzz::fs::copy_options::recursive);
    return d;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string identity = zl_fuzz::text(data, size);
  const zl_fuzz::fs::path run = zl_fuzz::fresh("run");
  zl_fuzz::put(run / "run_identity.json", identity);
  zl_fuzz::fs::copy_file(zl_fuzz::fixed_run() / "results.jsonl", run / "results.jsonl");
  zl_fuzz::compare_against_fixed(run);

  zl_fuzz::put(batch_a() / "runs" / "abs" / "run_identity.json", identity);
  zl_fuzz::compare_against_fixed(batch_a(),
                                 zl_fuzz::fs::path(ZL_SOURCE_DIR) / "tests" / "compare" / "data" / "batch_b");
  return 0;
}
