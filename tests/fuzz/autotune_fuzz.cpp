// Autotune records as `run --replay-from` reads them: the manifest and one
// LibTuner record, checked and rebuilt into an isolated tuner cache. The
// first byte of the input says which of the two files the rest is; the
// other is a fixed, valid one.
#include <cstddef>
#include <cstdint>
#include <exception>

#include "fuzz_util.hpp"
#include "zlcore/autotune.hpp"
#include "zlcore/tuner_cache.hpp"

namespace {

const char* const kManifest = "{\"schema\": 1, \"run_id\": \"fuzz\"}\n";
const char* const kRecord =
    "{\"schema\": 1, \"kind\": \"libtuner\", \"db_file\": \"TunedConfig_host_numgems_0_1.db\", \"table\": \"mm\", "
    "\"kernel\": \"mm_kernel\", \"columns\": [{\"name\": \"key_0\", \"type\": \"BIGINT\", \"pk\": 1}, "
    "{\"name\": \"BLOCK_M\", \"type\": \"INTEGER\", \"pk\": 0}], "
    "\"entries\": [{\"key_string\": \"1\", \"key\": [1], \"config\": {\"BLOCK_M\": 64}}]}\n";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const bool manifest = (data[0] & 1) != 0;
  const std::string text = zl_fuzz::text(data + 1, size - 1);
  const zl_fuzz::fs::path dir = zl_fuzz::fresh("replay");
  const zl_fuzz::fs::path records = dir / "A" / "autotune_records";
  zl_fuzz::put(records / "manifest.json", manifest ? text : kManifest);
  zl_fuzz::put(records / "libtuner" / "TunedConfig_host_numgems_0_1" / "t.json", manifest ? kRecord : text);
  zl::CacheDirs caches;
  caches.isolated = true;
  caches.flaggems = (dir / "B" / "flaggems").string();
  caches.triton = (dir / "B" / "triton").string();
  try {
    (void)zl::prepare_autotune("replay", (dir / "A").string(), false, caches, (dir / "B").string());
  } catch (const std::exception&) {
    // Refusing a record that does not read is the reader's job.
  }
  return 0;
}
