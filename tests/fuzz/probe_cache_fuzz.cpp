// The probe cache (probes-<hash>.json under the cache directory) as every
// command that loads backends reads it, looked up and saved again.
#include <cstddef>
#include <cstdint>
#include <exception>

#include "fuzz_util.hpp"
#include "loader/probe_cache.hpp"
#include "zlcore/sha256.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const zl_fuzz::fs::path cache = zl_fuzz::fresh("cache");
  const std::string backend_dir = "/zl-fuzz/plugins";
  const std::string name = "probes-" + zl::sha256_hex(backend_dir).substr(0, 16) + ".json";
  zl_fuzz::put(cache / name, zl_fuzz::text(data, size));
  try {
    zl::loader::ProbeCache pc(cache.string(), backend_dir);
    zl::loader::FileId id;
    id.size = 1;
    (void)pc.find(backend_dir + "/libzl_backend_host.so", id, 5.0);
    (void)pc.save({backend_dir + "/libzl_backend_host.so"});
  } catch (const std::exception&) {
  }
  return 0;
}
