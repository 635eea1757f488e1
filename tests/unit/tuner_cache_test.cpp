// Which LibTuner tables hold winners: names as FlagGems wrote them on an H200.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "zlcore/tuner_cache.hpp"
#include "zltest/temp_dir.hpp"

TEST(TunerCache, OnlyVersionedBenchmarkTablesAreTimingTables) {
  // A winners table under a non-default timing protocol carries
  // "_benchmark_<protocol hash>"; it must still count as winners.
  EXPECT_FALSE(zl::is_libtuner_timing_table(
      "mm_kernel_general_host_tma_5c4d1a5307873292ae26ebac32ca425c_flagtune_default_benchmark_b9dfe9fa1f34-"
      "89756365090932836bb7aa9f4fa7ad14"));
  EXPECT_FALSE(zl::is_libtuner_timing_table("mm_kernel_general_2455470fa9db9d68552fd83a5055b171-a493b6f4"));
  EXPECT_TRUE(zl::is_libtuner_timing_table("mm_kernel_general_2455470fa9db9d68552fd83a5055b171_benchmark_v2"));
  EXPECT_TRUE(zl::is_libtuner_timing_table("mm_kernel_9f2c_benchmark_v2-a493b6f49d2d58ea60dc7a6af4dc69bb"));
}

namespace {
// A Triton cache entry as triton 3.6 leaves it: a kernel has its metadata
// .json (and a __grp__ group file); a launcher stub is a lone .so.
void make_entry(const std::filesystem::path& root, const std::string& hash, const std::vector<std::string>& files,
                const std::string& json = "") {
  std::filesystem::create_directories(root / hash);
  for (const std::string& f : files) {
    std::ofstream(root / hash / f) << (f.size() > 5 && f.substr(f.size() - 5) == ".json" ? json : "x");
  }
}
}  // namespace

TEST(TunerCache, LauncherStubsAreNotCountedAsCompiledVariants) {
  namespace fs = std::filesystem;
  const zltest::TempDir tmp("zl-tuner-cache");
  const fs::path root = tmp.path();
  zl::CacheDirs dirs;
  dirs.triton = (root / "triton").string();
  dirs.flaggems = (root / "flaggems").string();
  fs::create_directories(dirs.triton);
  make_entry(dirs.triton, "OLDKERNEL", {"abs_kernel.json", "__grp__abs_kernel.json", "abs_kernel.cubin"},
             R"({"name": "abs_kernel", "num_warps": 4, "num_stages": 2, "shared": 0, "hash": "aaa"})");
  const zl::CacheSnapshot before = zl::snapshot_cache(dirs);
  EXPECT_EQ(before.triton_entries.size(), 1u);

  make_entry(dirs.triton, "NEWKERNEL", {"mm_kernel.json", "__grp__mm_kernel.json", "mm_kernel.cubin"},
             R"({"name": "mm_kernel", "num_warps": 8, "num_stages": 3, "shared": 98304, "hash": "bbb"})");
  make_entry(dirs.triton, "STUB1", {"cuda_utils.so"});
  make_entry(dirs.triton, "STUB2", {"__triton_launcher.so"});
  const zl::CacheSnapshot after = zl::snapshot_cache(dirs);
  EXPECT_EQ(after.triton_entries.size(), 4u);  // three new entries, one of them a kernel

  const std::vector<zl::KernelInfo> kernels = zl::new_kernels(dirs, before, after);
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels[0].name, "mm_kernel");
  EXPECT_EQ(kernels[0].num_warps, 8);
}
