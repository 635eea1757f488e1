// The loader matrix: every way a file in the backend directory can be wrong,
// each rejected with its exact reason while the good backends still load.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "zlcore/loader.hpp"
#include "zlcore/registry.hpp"
#include "zltest/temp_dir.hpp"

namespace {

std::string base(const std::string& path) { return path.substr(path.rfind('/') + 1); }

std::map<std::string, std::string> rejected_by_file(const std::vector<zl::Rejected>& rejected) {
  std::map<std::string, std::string> out;
  for (const zl::Rejected& r : rejected) out[base(r.path)] = r.reason;
  return out;
}

TEST(LoaderMatrix, GoodBackendsLoadAndEachBadFileHasItsReason) {
  zl::Registry reg(zl::load_backends(ZL_MATRIX_DIR));

  std::vector<std::string> names;
  for (const zl::Backend& b : reg.backends()) names.push_back(b.name());
  EXPECT_EQ(names, (std::vector<std::string>{"alpha", "older", "newer", "empty"}));

  auto rejected = rejected_by_file(reg.rejected());
  EXPECT_EQ(rejected.size(), 6u);
  EXPECT_EQ(rejected["b_text_file.so"], "not an ELF shared object");
  EXPECT_EQ(rejected["c_no_entry.so"], "no entry symbol zl_backend_get_api");
  EXPECT_EQ(rejected["d_null_entry.so"], "entry returned NULL");
  EXPECT_EQ(rejected["e_major_plus_one.so"], "ABI major 2 does not match the core's 1");
  EXPECT_NE(rejected["h_unresolved.so"].find("cannot load: "), std::string::npos);
  EXPECT_NE(rejected["h_unresolved.so"].find("zl_fake_symbol_that_does_not_exist"), std::string::npos)
      << rejected["h_unresolved.so"];
  EXPECT_EQ(rejected["i_duplicate_name.so"],
            std::string("name 'alpha' is already taken by ") + ZL_MATRIX_DIR "/a_good.so");
}

// Through the probe (a zlcore child per file, as every command loads): the
// same backends and the same reasons, each file's checks made in the child.
TEST(LoaderMatrix, ProbingGivesTheSameVerdicts) {
  zl::LoadOptions opts;
  opts.probe_program = ZL_CLI;
  opts.cache_dir = "-";
  zl::Registry direct(zl::load_backends(ZL_MATRIX_DIR));
  zl::Registry probed(zl::load_backends(ZL_MATRIX_DIR, opts));
  std::vector<std::string> a, b;
  for (const zl::Backend& x : direct.backends()) a.push_back(x.name());
  for (const zl::Backend& x : probed.backends()) b.push_back(x.name());
  EXPECT_EQ(a, b);
  EXPECT_EQ(rejected_by_file(direct.rejected()), rejected_by_file(probed.rejected()));
}

// The limit is the backend's: a probe child whose own start is slow (a
// loaded machine, a sanitizer build; here a wrapper that waits 1.5 s before
// it becomes zlcore) is not cut off before it reaches the file. In CI a dozen
// probes starting at once took over 1 s, and the good backend was rejected
// "no answer in 1 s before loading".
TEST(LoaderMatrix, TheLimitCountsFromTheChildsFirstWordNotItsStart) {
  const zltest::TempDir tmp("zl-slow-start");
  const std::string wrapper = (tmp / "slow-zlcore").string();
  {
    std::FILE* f = std::fopen(wrapper.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fprintf(f, "#!/bin/sh\nsleep 1.5\nexec '%s' \"$@\"\n", ZL_CLI);
    std::fclose(f);
  }
  ASSERT_EQ(::chmod(wrapper.c_str(), 0755), 0);
  zl::LoadOptions opts;
  opts.probe_program = wrapper;
  opts.cache_dir = "-";
  opts.timeout_s = 1;
  zl::Registry probed(zl::load_backends(ZL_MATRIX_DIR, opts));
  std::vector<std::string> names;
  for (const zl::Backend& b : probed.backends()) names.push_back(b.name());
  EXPECT_EQ(names, (std::vector<std::string>{"alpha", "older", "newer", "empty"}));
  for (const auto& [file, reason] : rejected_by_file(probed.rejected())) {
    EXPECT_EQ(reason.find("no answer"), std::string::npos) << file << ": " << reason;
  }
}

TEST(LoaderMatrix, OlderAndNewerMinorsNegotiate) {
  zl::Registry reg(zl::load_backends(ZL_MATRIX_DIR));
  const zl::Backend* older = reg.find("older");
  const zl::Backend* newer = reg.find("NEWER");
  ASSERT_NE(older, nullptr);
  ASSERT_NE(newer, nullptr);
  EXPECT_EQ(older->abi(), "1." + std::to_string(ZL_BACKEND_ABI_MINOR - 1));
  EXPECT_EQ(older->backend_version(), "");  // the field is past its struct_size
  EXPECT_EQ(newer->abi(), "1." + std::to_string(ZL_BACKEND_ABI_MINOR + 1));
  EXPECT_EQ(newer->backend_version(), "fake newer");
  EXPECT_EQ(newer->enumerate().devices.size(), 2u);
}

TEST(LoaderMatrix, ZeroDevicesComeWithTheReason) {
  zl::Registry reg(zl::load_backends(ZL_MATRIX_DIR));
  const zl::Backend* empty = reg.find("empty");
  ASSERT_NE(empty, nullptr);
  zl::DeviceQuery q = empty->enumerate();
  EXPECT_TRUE(q.devices.empty());
  EXPECT_EQ(q.reason, "fake driver reports no devices");
  EXPECT_EQ(q.source, "fake");
}

TEST(LoaderMatrix, MissingDirectoryLoadsNothing) {
  zl::LoadReport r = zl::load_backends("/nonexistent/zlcore/plugins");
  EXPECT_TRUE(r.backends.empty());
  EXPECT_TRUE(r.rejected.empty());
}

// The CLI on the same directory: one JSON object, exit 0 although files were
// rejected.
TEST(LoaderMatrix, BackendsJsonListsBothAndExitsZero) {
  std::string cmd = std::string(ZL_CLI) + " --backend-dir " + ZL_MATRIX_DIR + " backends --json";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int status = pclose(p);
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_NE(out.find("\"name\": \"alpha\""), std::string::npos) << out;
  EXPECT_NE(out.find("\"reason\": \"entry returned NULL\""), std::string::npos) << out;
  EXPECT_NE(out.find("\"aliases\": [\n        \"alpha-alias\""), std::string::npos) << out;
}

}  // namespace
