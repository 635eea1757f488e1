// An ops file (`batch --ops-file`, `ab --ops-file`): a list of op names, or
// YAML with per-op settings, read and checked as batch does. The first
// byte of the input picks the reader (the file's extension); the rest is
// the file.
#include <cstddef>
#include <cstdint>
#include <exception>

#include "fuzz_util.hpp"
#include "zlcore/batch.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const zl_fuzz::fs::path file = zl_fuzz::scratch() / ((data[0] & 1) != 0 ? "ops.yaml" : "ops.txt");
  zl_fuzz::put(file, zl_fuzz::text(data + 1, size - 1));
  try {
    const std::vector<zl::batch::OpSpec> ops = zl::batch::load_ops_file(file.string());
    zl::batch::check_ops(ops, "--ops-file");
    (void)zl::batch::needs_expansion(ops);
  } catch (const std::exception&) {
    // Refusing a file with a bad entry is the reader's job.
  }
  return 0;
}
