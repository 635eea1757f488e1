// The Ascend backend: npu-smi `info -m` and `info` parsers on recorded
// outputs (Mcu rows, HBM and non-HBM chips), then the module through the C ABI.
#include "ascend_parse.hpp"
#include "backend_test_util.hpp"

using namespace zl_test;

namespace {

TEST(AscendParse, MapSkipsMcuRows) {
  std::vector<zl_ascend::ChipKey> keys;
  auto r = zl_ascend::parse_npu_smi_map(read_testdata("npu_map_910b3_8npu.txt"), keys);
  ASSERT_TRUE(r.ok()) << r.error;
  ASSERT_EQ(r.devices.size(), 8u);
  ASSERT_EQ(keys.size(), 8u);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(r.devices[i].index, i);
    EXPECT_EQ(r.devices[i].visibility_value, std::to_string(i));
    EXPECT_EQ(r.devices[i].name, "Ascend 910B3");
    EXPECT_EQ(keys[i], (zl_ascend::ChipKey{i, 0}));
  }
}

TEST(AscendParse, InfoReadsHbmAndStopsAtProcesses) {
  std::map<zl_ascend::ChipKey, zl_ascend::ChipStatus> status;
  ASSERT_EQ(zl_ascend::parse_npu_smi_info(read_testdata("npu_info_910b3_8npu.txt"), status), "");
  ASSERT_EQ(status.size(), 8u);
  const auto& s = status.at({2, 0});
  EXPECT_EQ(s.bus_id, "0000:C2:00.0");
  EXPECT_EQ(s.memory_used_mb, 61203);
  EXPECT_EQ(s.memory_total_mb, 65536);
  EXPECT_EQ(s.aicore_percent, 87);
  EXPECT_EQ(s.name, "910B3");
  EXPECT_EQ(s.driver_version, "23.0.6");  // "Version: 23.0.6" above the table
}

TEST(AscendParse, MapAndInfoMerge) {
  std::vector<zl_ascend::ChipKey> keys;
  auto r = zl_ascend::parse_npu_smi_map(read_testdata("npu_map_910b3_8npu.txt"), keys);
  std::map<zl_ascend::ChipKey, zl_ascend::ChipStatus> status;
  ASSERT_EQ(zl_ascend::parse_npu_smi_info(read_testdata("npu_info_910b3_8npu.txt"), status), "");
  zl_ascend::merge_npu_smi_info(status, r.devices, keys);
  EXPECT_EQ(r.devices[0].id, "0000:C1:00.0/chip0");
  EXPECT_EQ(r.devices[0].memory_total_bytes, 65536 * kMiB);
  EXPECT_EQ(r.devices[0].memory_used_bytes, static_cast<int64_t>(3396 * kMiB));
  EXPECT_EQ(r.devices[2].utilization_percent, 87);
  bool driver = false;
  for (const auto& v : r.devices[0].attributes) driver = driver || (v.name == "driver_version" && v.text == "23.0.6");
  EXPECT_TRUE(driver);
}

TEST(AscendParse, DuoCardTwoChipsWithoutHbm) {
  std::vector<zl_ascend::ChipKey> keys;
  auto r = zl_ascend::parse_npu_smi_map(read_testdata("npu_map_310p3_duo.txt"), keys);
  ASSERT_TRUE(r.ok()) << r.error;
  ASSERT_EQ(r.devices.size(), 2u);
  EXPECT_EQ(r.devices[1].visibility_value, "1");
  EXPECT_EQ(keys[1], (zl_ascend::ChipKey{1, 1}));
  std::map<zl_ascend::ChipKey, zl_ascend::ChipStatus> status;
  ASSERT_EQ(zl_ascend::parse_npu_smi_info(read_testdata("npu_info_310p3_duo.txt"), status), "");
  zl_ascend::merge_npu_smi_info(status, r.devices, keys);
  EXPECT_EQ(r.devices[1].memory_total_bytes, 43693 * kMiB);
  EXPECT_EQ(r.devices[1].memory_used_bytes, static_cast<int64_t>(22416 * kMiB));
  EXPECT_EQ(r.devices[1].utilization_percent, 12);
  EXPECT_NE(r.devices[0].id, r.devices[1].id);  // same bus id, different chips
}

TEST(AscendParse, MalformedMapLogicId) {
  auto r = zl_ascend::parse_npu_smi_map(read_testdata("npu_map_malformed_logic.txt"));
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.error.find("chip logic id is not a number"), std::string::npos) << r.error;
}

TEST(AscendParse, MalformedMapHeader) {
  auto r = zl_ascend::parse_npu_smi_map(read_testdata("npu_map_malformed_header.txt"));
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.error.find("header"), std::string::npos) << r.error;
}

TEST(AscendParse, ErrorTextIsNotAMap) {
  auto r = zl_ascend::parse_npu_smi_map(read_testdata("npu_error_no_driver.txt"));
  EXPECT_FALSE(r.ok());
}

TEST(AscendParse, MalformedInfoUsage) {
  std::map<zl_ascend::ChipKey, zl_ascend::ChipStatus> status;
  EXPECT_NE(zl_ascend::parse_npu_smi_info(read_testdata("npu_info_malformed_usage.txt"), status).find("usage cell"),
            std::string::npos);
  EXPECT_NE(zl_ascend::parse_npu_smi_info(read_testdata("npu_error_no_driver.txt"), status), "");
  EXPECT_NE(zl_ascend::parse_npu_smi_info(read_testdata("npu_map_910b3_8npu.txt"), status), "");
}

// ---- the module through the C ABI ----------------------------------------

class AscendModule : public ::testing::Test {
 protected:
  void SetUp() override {
    api = load_backend();
    ASSERT_NE(api, nullptr);
    env.set("ZL_ASCEND_NPU_SMI", std::nullopt);
  }
  const zl_backend_api* api = nullptr;
  ScopedEnv env;
  TempDir dir;
};

TEST_F(AscendModule, DescribesItself) {
  EXPECT_STREQ(api->name, "ascend");
  EXPECT_EQ(strings(api->aliases), (std::vector<std::string>{"npu", "huawei"}));
  EXPECT_EQ(strings(api->visibility_env), (std::vector<std::string>{"ASCEND_RT_VISIBLE_DEVICES"}));
  EXPECT_EQ(capabilities(api), (std::map<std::string, std::string>{{"device_events", "1"}}));
  EXPECT_STREQ(api->torch_device, "npu");
  EXPECT_STREQ(api->framework_vendor, "ascend");
}

TEST_F(AscendModule, MapAndInfo) {
  env.set("ZL_ASCEND_NPU_SMI",
          write_fake_tool(dir, "npu-smi",
                          {{"info -m", 0, "npu_map_910b3_8npu.txt", ""}, {"info", 0, "npu_info_910b3_8npu.txt", ""}}));
  Answer a = enumerate(api);
  ASSERT_FALSE(a.error) << a.message;
  EXPECT_EQ(a.source, "tool");
  ASSERT_EQ(a.devices.size(), 8u);
  EXPECT_EQ(a.devices[2].visibility_value, "2");
  EXPECT_EQ(a.devices[2].id, "0000:C2:00.0/chip0");
  EXPECT_EQ(a.devices[2].utilization_percent, 87);
}

TEST_F(AscendModule, InfoFailingStillListsChips) {
  env.set("ZL_ASCEND_NPU_SMI",
          write_fake_tool(dir, "npu-smi",
                          {{"info -m", 0, "npu_map_310p3_duo.txt", ""}, {"info", 1, "npu_error_no_driver.txt", ""}}));
  Answer a = enumerate(api);
  ASSERT_FALSE(a.error) << a.message;
  ASSERT_EQ(a.devices.size(), 2u);
  EXPECT_EQ(a.devices[0].memory_total_bytes, 0u);
  EXPECT_EQ(a.devices[0].memory_used_bytes, -1);
}

TEST_F(AscendModule, MalformedMapIsAParseError) {
  env.set("ZL_ASCEND_NPU_SMI", write_fake_tool(dir, "npu-smi", {{"info -m", 0, "npu_map_malformed_logic.txt", ""}}));
  Answer a = enumerate(api);
  ASSERT_TRUE(a.error);
  EXPECT_EQ(a.code, ZL_ERROR_PARSE);
}

TEST_F(AscendModule, DriverMissingIsAReason) {
  env.set("ZL_ASCEND_NPU_SMI", write_fake_tool(dir, "npu-smi", {{"info -m", 255, "npu_error_no_driver.txt", ""}}));
  Answer a = enumerate(api);
  ASSERT_FALSE(a.error) << a.message;
  ASSERT_TRUE(a.reason.has_value());
  EXPECT_NE(a.reason->find("dcmi module initialize failed"), std::string::npos) << *a.reason;
}

TEST_F(AscendModule, NoToolReasonNamesLibraryAndTool) {
  TempDir empty;
  env.set("PATH", empty.path().string());
  Answer a = enumerate(api);
  ASSERT_FALSE(a.error) << a.message;
  ASSERT_TRUE(a.reason.has_value());
  EXPECT_NE(a.reason->find("libdcmi.so"), std::string::npos) << *a.reason;
  EXPECT_NE(a.reason->find("npu-smi info -m could not run"), std::string::npos) << *a.reason;
}

}  // namespace
