// Reading a lease back (--resume decides from it what to wait for or kill):
// what zlcore wrote reads the same, and a number that would name another
// process once narrowed to pid_t is refused.
#include "batch/lease.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "zltest/files.hpp"
#include "zltest/temp_dir.hpp"

namespace {

std::string lease_text(const std::string& pid, const std::string& pgid, const std::string& device = "0") {
  return R"({"op":"abs","run_dir":"runs/abs","batch_dir":"/b","warmup":false,"device_index":)" + device +
         R"(,"device_id":"","pid":)" + pid + R"(,"pgid":)" + pgid +
         R"(,"start_ticks":5,"boot_id":"b","host":"h","started":""})";
}

TEST(Lease, WhatIsWrittenReadsBack) {
  zltest::TempDir tmp{"zl-lease"};
  zl::batch::Lease l;
  l.op = "abs";
  l.run_dir = "runs/abs";
  l.batch_dir = "/b";
  l.device_index = 2;
  ASSERT_TRUE(zl::batch::describe_process(::getpid(), &l));
  const std::string path = (tmp / "l.json").string();
  zl::batch::write_lease(path, l);
  std::string why;
  const auto back = zl::batch::read_lease(path, &why);
  ASSERT_TRUE(back) << why;
  EXPECT_EQ(back->pid, ::getpid());
  EXPECT_EQ(back->pgid, l.pgid);
  EXPECT_EQ(back->start_ticks, l.start_ticks);
  EXPECT_EQ(back->device_index, 2);
  EXPECT_EQ(back->pass, "run");
}

// A resume adopts only a run's result, and says which pass it waits for;
// a lease of zlcore before "pass" said "warmup" for either kind.
TEST(Lease, ThePassThatStartedItReadsBackAndOlderLeasesAreNeverAdopted) {
  zltest::TempDir tmp{"zl-lease"};
  const std::string path = (tmp / "l.json").string();
  for (const char* pass : {"run", "warm-up", "compile"}) {
    zl::batch::Lease l;
    l.op = "abs";
    l.run_dir = "compile/abs";
    l.batch_dir = "/b";
    l.pass = pass;
    ASSERT_TRUE(zl::batch::describe_process(::getpid(), &l));
    zl::batch::write_lease(path, l);
    std::string why;
    const auto back = zl::batch::read_lease(path, &why);
    ASSERT_TRUE(back) << why;
    EXPECT_EQ(back->pass, pass);
  }
  std::string text = lease_text("40", "40");
  text.replace(text.find("\"warmup\":false"), 14, "\"warmup\":true");
  zltest::spit(path, text);
  std::string why;
  auto older = zl::batch::read_lease(path, &why);
  ASSERT_TRUE(older) << why;
  EXPECT_EQ(older->pass, "warm-up");
  EXPECT_EQ(zl::batch::lease_words(*older), "its warm-up");
  zltest::spit(path, text.substr(0, text.size() - 1) + R"(,"pass":"compile"})");
  older = zl::batch::read_lease(path, &why);
  ASSERT_TRUE(older) << why;
  EXPECT_EQ(zl::batch::lease_words(*older), "its compile-ahead run");
  const std::string plain = lease_text("40", "40");  // "warmup": false
  zltest::spit(path, plain.substr(0, plain.size() - 1) + R"(,"pass":"someday"})");
  const auto unknown = zl::batch::read_lease(path, &why);
  ASSERT_TRUE(unknown) << why;
  EXPECT_EQ(unknown->pass, "warm-up") << "an unknown pass is never adopted, whatever warmup says";
}

TEST(Lease, APidPastPidTsRangeIsRefusedNotWrapped) {
  zltest::TempDir tmp{"zl-lease"};
  const std::string path = (tmp / "l.json").string();
  // 2^32 + 1 and 2^32 + 2: narrowed to pid_t they are 1 (init) and 2.
  for (const auto& [pid, pgid] : {std::pair{"4294967297", "40"}, std::pair{"40", "4294967298"}}) {
    zltest::spit(path, lease_text(pid, pgid));
    std::string why;
    EXPECT_FALSE(zl::batch::read_lease(path, &why)) << pid << " " << pgid;
    EXPECT_EQ(why, "not a lease zlcore writes");
  }
  zltest::spit(path, lease_text("40", "40", "4294967296"));
  std::string why;
  const auto l = zl::batch::read_lease(path, &why);
  ASSERT_TRUE(l) << why;
  EXPECT_EQ(l->device_index, -1) << "a device index past int's range is no device";
}

}  // namespace
