// rounds.csv as `ab --resume` reads it back: the torn-line repair, the
// reader, and what is left to run from the lines it kept.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <set>

#include "fuzz_util.hpp"
#include "zlcore/ab.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const zl_fuzz::fs::path dir = zl_fuzz::fresh("ab");
  const std::string file = (dir / "rounds.csv").string();
  zl_fuzz::put(file, zl_fuzz::text(data, size));
  try {
    (void)zl::ab::repair_rounds_csv(file);
    const std::vector<zl::ab::RoundLine> lines = zl::ab::read_rounds_csv(file);
    std::set<std::string> ops;
    for (const zl::ab::RoundLine& l : lines) ops.insert(l.op);
    (void)zl::ab::unfinished_ops(lines, {ops.begin(), ops.end()}, 3);
    (void)zl::ab::lines_of_shard(lines, 1);
  } catch (const std::exception&) {
    // Refusing a file that is not an A/B's is the reader's job.
  }
  return 0;
}
