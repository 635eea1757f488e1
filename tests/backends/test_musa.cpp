// The MUSA backend: mthreads-gmi query parsers (JSON and -q text) on recorded
// outputs, then the module through the C ABI with a fake mthreads-gmi.
#include "backend_test_util.hpp"
#include "musa_parse.hpp"

using namespace zl_test;

namespace {

TEST(MusaParse, JsonEightS4000) {
  auto r = zl_musa::parse_gmi_json(read_testdata("gmi_json_s4000_8gpu.json"));
  ASSERT_TRUE(r.ok()) << r.error;
  ASSERT_EQ(r.devices.size(), 8u);
  EXPECT_EQ(r.devices[0].id, "7de4d75b-7522-1fdc-8dc4-db9a169a5e88");
  EXPECT_EQ(r.devices[0].name, "MTT S4000");
  EXPECT_EQ(r.devices[0].memory_total_bytes, 49152 * kMiB);
  EXPECT_EQ(r.devices[0].memory_used_bytes, static_cast<int64_t>(1024 * kMiB));
  EXPECT_EQ(r.devices[3].utilization_percent, 93);
  EXPECT_EQ(r.devices[3].memory_used_bytes, static_cast<int64_t>(40960 * kMiB));
  EXPECT_EQ(r.devices[7].index, 7);
  EXPECT_EQ(r.devices[7].visibility_value, "7");
  // The host's driver, reported once at the top, is every GPU's attribute.
  for (const auto& d : r.devices) {
    bool found = false;
    for (const auto& v : d.attributes) found = found || (v.name == "driver_version" && v.text == "2.7.0");
    EXPECT_TRUE(found) << d.id;
  }
}

TEST(MusaParse, JsonSingleGpuAsAnObjectWithUnknowns) {
  auto r = zl_musa::parse_gmi_json(read_testdata("gmi_json_s80_single_object.json"));
  ASSERT_TRUE(r.ok()) << r.error;
  ASSERT_EQ(r.devices.size(), 1u);
  EXPECT_EQ(r.devices[0].name, "MTT S80");
  EXPECT_EQ(r.devices[0].memory_total_bytes, 16384 * kMiB);
  EXPECT_EQ(r.devices[0].memory_used_bytes, -1);
  EXPECT_EQ(r.devices[0].utilization_percent, -1);
}

TEST(MusaParse, QueryTextTwoS4000) {
  auto r = zl_musa::parse_gmi_query_text(read_testdata("gmi_query_s4000_2gpu.txt"));
  ASSERT_TRUE(r.ok()) << r.error;
  ASSERT_EQ(r.devices.size(), 2u);
  EXPECT_EQ(r.devices[1].id, "a7257b94-d3d7-61b5-4f15-bbf8c2f23218");
  EXPECT_EQ(r.devices[0].utilization_percent, 12);
  EXPECT_EQ(r.devices[0].memory_used_bytes, static_cast<int64_t>(1024 * kMiB));
  EXPECT_EQ(r.devices[1].memory_total_bytes, 49152 * kMiB);
  EXPECT_EQ(r.devices[1].visibility_value, "1");
}

TEST(MusaParse, JsonAndTextAgree) {
  auto j = zl_musa::parse_gmi_json(read_testdata("gmi_json_s4000_8gpu.json"));
  auto t = zl_musa::parse_gmi_query_text(read_testdata("gmi_query_s4000_2gpu.txt"));
  ASSERT_TRUE(j.ok() && t.ok());
  for (size_t i = 0; i < t.devices.size(); ++i) {
    EXPECT_EQ(j.devices[i].id, t.devices[i].id);
    EXPECT_EQ(j.devices[i].name, t.devices[i].name);
    EXPECT_EQ(j.devices[i].memory_total_bytes, t.devices[i].memory_total_bytes);
  }
}

struct Malformed {
  const char* file;
  bool json;
  const char* says;
};
class MusaParseMalformed : public ::testing::TestWithParam<Malformed> {};
TEST_P(MusaParseMalformed, IsRejectedWithAReason) {
  const std::string text = read_testdata(GetParam().file);
  auto r = GetParam().json ? zl_musa::parse_gmi_json(text) : zl_musa::parse_gmi_query_text(text);
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(r.devices.empty());
  EXPECT_NE(r.error.find(GetParam().says), std::string::npos) << r.error;
}
INSTANTIATE_TEST_SUITE_P(Recorded, MusaParseMalformed,
                         ::testing::Values(Malformed{"gmi_json_malformed_memory.json", true, "memory total"},
                                           Malformed{"gmi_json_malformed_no_gpu.json", true, "no \"GPU\" entry"},
                                           Malformed{"gmi_table_default.txt", true, "no JSON object"},
                                           Malformed{"gmi_table_default.txt", false, "no \"GPU <bus id>\" block"},
                                           Malformed{"gmi_error_no_driver.txt", false, "no \"GPU <bus id>\" block"},
                                           Malformed{"gmi_error_unknown_option.txt", true, "no JSON object"}),
                         [](const auto& info) {
                           return file_test_name(info.param.file) + (info.param.json ? "_json" : "_text");
                         });

// ---- the module through the C ABI ----------------------------------------

class MusaModule : public ::testing::Test {
 protected:
  void SetUp() override {
    api = load_backend();
    ASSERT_NE(api, nullptr);
    env.set("ZL_MUSA_GMI", std::nullopt);
  }
  const zl_backend_api* api = nullptr;
  ScopedEnv env;
  TempDir dir;
};

TEST_F(MusaModule, DescribesItself) {
  EXPECT_STREQ(api->name, "musa");
  EXPECT_EQ(strings(api->aliases), (std::vector<std::string>{"mthreads", "mt"}));
  EXPECT_EQ(strings(api->visibility_env), (std::vector<std::string>{"MUSA_VISIBLE_DEVICES"}));
  EXPECT_EQ(capabilities(api), (std::map<std::string, std::string>{{"device_events", "1"}}));
  EXPECT_STREQ(api->torch_device, "musa");
  EXPECT_STREQ(api->framework_vendor, "mthreads");
}

TEST_F(MusaModule, JsonQuery) {
  env.set("ZL_MUSA_GMI", write_fake_tool(dir, "mthreads-gmi", {{"-q --json", 0, "gmi_json_s4000_8gpu.json", ""}}));
  Answer a = enumerate(api);
  ASSERT_FALSE(a.error) << a.message;
  EXPECT_EQ(a.source, "tool");
  ASSERT_EQ(a.devices.size(), 8u);
  EXPECT_EQ(a.devices[5].visibility_value, "5");
}

TEST_F(MusaModule, OldReleaseWithoutJsonFallsBackToText) {
  env.set("ZL_MUSA_GMI", write_fake_tool(dir, "mthreads-gmi",
                                         {{"-q --json", 1, "", "gmi_error_unknown_option.txt"},
                                          {"-q", 0, "gmi_query_s4000_2gpu.txt", ""}}));
  Answer a = enumerate(api);
  ASSERT_FALSE(a.error) << a.message;
  ASSERT_EQ(a.devices.size(), 2u);
  EXPECT_EQ(a.devices[0].id, "7de4d75b-7522-1fdc-8dc4-db9a169a5e88");
}

TEST_F(MusaModule, TextThatIsNotUnderstoodIsAParseError) {
  env.set("ZL_MUSA_GMI", write_fake_tool(dir, "mthreads-gmi",
                                         {{"-q --json", 1, "", "gmi_error_unknown_option.txt"},
                                          {"-q", 0, "gmi_table_default.txt", ""}}));
  Answer a = enumerate(api);
  ASSERT_TRUE(a.error);
  EXPECT_EQ(a.code, ZL_ERROR_PARSE);
}

TEST_F(MusaModule, DriverMissingIsAReason) {
  env.set("ZL_MUSA_GMI", write_fake_tool(dir, "mthreads-gmi",
                                         {{"-q --json", 255, "gmi_error_no_driver.txt", ""},
                                          {"-q", 255, "gmi_error_no_driver.txt", ""}}));
  Answer a = enumerate(api);
  ASSERT_FALSE(a.error) << a.message;
  ASSERT_TRUE(a.reason.has_value());
  EXPECT_NE(a.reason->find("Driver Not Loaded"), std::string::npos) << *a.reason;
}

TEST_F(MusaModule, NoToolReasonNamesLibraryAndTool) {
  TempDir empty;
  env.set("PATH", empty.path().string());
  Answer a = enumerate(api);
  ASSERT_FALSE(a.error) << a.message;
  EXPECT_TRUE(a.devices.empty());
  ASSERT_TRUE(a.reason.has_value());
  EXPECT_NE(a.reason->find("libmtml.so"), std::string::npos) << *a.reason;
  EXPECT_NE(a.reason->find("mthreads-gmi could not run"), std::string::npos) << *a.reason;
}

}  // namespace
