// ops_status.csv as `batch --resume` and `compare` read it back: the status
// reader (with its repair bookkeeping), the run-directory lookup, and the
// plain CSV splitter under both.
#include <cstddef>
#include <cstdint>
#include <exception>

#include "fuzz_util.hpp"
#include "zlcore/batch.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = zl_fuzz::text(data, size);
  try {
    const zl::batch::StatusFile f = zl::batch::parse_status_text(text, "ops_status.csv");
    (void)f.needs_repair();
  } catch (const std::exception&) {
    // Refusing a file that is not a batch's is the reader's job.
  }
  try {
    (void)zl::batch::current_run_dirs(text);
  } catch (const std::exception&) {
  }
  bool dropped = false;
  (void)zl::batch::parse_csv(text, &dropped);
  return 0;
}
