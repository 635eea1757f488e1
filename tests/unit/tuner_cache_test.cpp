// Which LibTuner tables hold winners: names as FlagGems wrote them on an H200.
#include <gtest/gtest.h>

#include "zlcore/tuner_cache.hpp"

TEST(TunerCache, OnlyVersionedBenchmarkTablesAreTimingTables) {
  // A winners table under a non-default timing protocol carries
  // "_benchmark_<protocol hash>"; it must still count as winners.
  EXPECT_FALSE(zl::is_libtuner_timing_table(
      "mm_kernel_general_host_tma_5c4d1a5307873292ae26ebac32ca425c_flagtune_default_benchmark_b9dfe9fa1f34-"
      "89756365090932836bb7aa9f4fa7ad14"));
  EXPECT_FALSE(zl::is_libtuner_timing_table("mm_kernel_general_2455470fa9db9d68552fd83a5055b171-a493b6f4"));
  EXPECT_TRUE(zl::is_libtuner_timing_table("mm_kernel_general_2455470fa9db9d68552fd83a5055b171_benchmark_v2"));
  EXPECT_TRUE(zl::is_libtuner_timing_table(
      "mm_kernel_9f2c_benchmark_v2-a493b6f49d2d58ea60dc7a6af4dc69bb"));
}
