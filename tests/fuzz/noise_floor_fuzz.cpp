// A noise-floor file (`compare --noise-floor`, `ab --noise-floor`) as read,
// then applied to a report whose JSON and CSV must stay valid.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>

#include "compare_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const zl_fuzz::fs::path dir = zl_fuzz::fresh("floor");
  zl_fuzz::put(dir / "floor.json", zl_fuzz::text(data, size));
  zl::compare::Options options;
  try {
    options.noise_floor =
        std::make_shared<const zl::compare::NoiseFloor>(zl::compare::load_noise_floor((dir / "floor.json").string()));
  } catch (const std::exception&) {
    return 0;  // refused with a message: what a reader may do
  }
  const zl_fuzz::fs::path a = zl_fuzz::fixed_run().parent_path() / "a";
  zl::compare::Report report = zl::compare::compare(
      zl::compare::load_side("A", a.string()), zl::compare::load_side("B", zl_fuzz::fixed_run().string()), options);
  std::ostringstream csv, json, table;
  zl::compare::write_json(json, report);
  zl::compare::write_csv(csv, report);
  zl::compare::write_table(table, report);
  zl_fuzz::check_json(json.str());
  zl_fuzz::check_csv(csv.str());
  return 0;
}
