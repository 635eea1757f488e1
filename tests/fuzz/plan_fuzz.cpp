// plan.json of a Slurm batch or A/B, as every shard, the merge job and
// --resume read it back, and the plan written again from what was read.
#include <cstddef>
#include <cstdint>
#include <exception>

#include "batch/slurm.hpp"
#include "fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const zl_fuzz::fs::path dir = zl_fuzz::fresh("batch");
  zl_fuzz::put(dir / "plan.json", zl_fuzz::text(data, size));
  try {
    const zl::batch::slurm::Plan plan = zl::batch::slurm::read_plan(dir / "plan.json");
    (void)plan.shards();
    (void)zl::batch::slurm::plan_json(plan);
  } catch (const std::exception&) {
    // Refusing a file that is not a plan is the reader's job.
  }
  return 0;
}
