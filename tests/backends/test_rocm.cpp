// The ROCm backend: amd-smi and rocm-smi parsers on recorded outputs (both
// key cases of rocm-smi), then the module through the C ABI with fake tools.
#include "backend_test_util.hpp"
#include "rocm_parse.hpp"
#include "zl_kit/text.hpp"

using namespace zl_test;

namespace {

const char* const kListArgs = "list -e --json";
const char* const kStaticArgs = "static --asic --vram --json";
const char* const kRocmSmiArgs = "--showproductname --showuse --showmeminfo vram --showuniqueid --showbus --json";

TEST(RocmParse, AmdSmiListEightMi300x) {
  auto r = zl_rocm::parse_amd_smi_list(read_testdata("amd_smi_list_mi300x_8gpu.json"));
  ASSERT_TRUE(r.ok()) << r.error;
  ASSERT_EQ(r.devices.size(), 8u);
  EXPECT_EQ(r.devices[0].id, "0000:05:00.0");
  EXPECT_EQ(r.devices[0].visibility_value, "GPU-4b7a5c1e2d3f9e10");  // ROCR's UUID form
  EXPECT_EQ(r.devices[7].index, 7);
  EXPECT_EQ(r.devices[7].visibility_value, "GPU-9b14d7c2e5a0f863");
  EXPECT_EQ(r.devices[0].memory_used_bytes, -1);
  EXPECT_EQ(r.devices[0].utilization_percent, -1);
}

TEST(RocmParse, AmdSmiStaticAddsNamesAndMemory) {
  auto r = zl_rocm::parse_amd_smi_list(read_testdata("amd_smi_list_mi300x_8gpu.json"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(zl_rocm::merge_amd_smi_static(read_testdata("amd_smi_static_mi300x_8gpu.json"), r.devices), "");
  for (const auto& d : r.devices) {
    EXPECT_EQ(d.name, "AMD Instinct MI300X");
    EXPECT_EQ(d.memory_total_bytes, 196592 * kMiB);
  }
  // ABI 1.2 attributes from the same answer: the gfx target, its generation,
  // the bus width and AMD's own peak bandwidth figure for the board.
  auto find = [&](const char* name) -> const zl_kit::Value* {
    for (const auto& v : r.devices[0].attributes) {
      if (v.name == name) return &v;
    }
    return nullptr;
  };
  ASSERT_NE(find("architecture"), nullptr);
  EXPECT_EQ(find("compute_capability")->text, "gfx942");
  EXPECT_EQ(find("architecture")->text, "cdna3");
  EXPECT_EQ(find("compute_units")->integer, 304);
  ASSERT_NE(find("memory_bus_width_bits"), nullptr);
  EXPECT_EQ(find("memory_bus_width_bits")->integer, 8192);
  ASSERT_NE(find("memory_bandwidth_peak_gbps"), nullptr);
  EXPECT_EQ(find("memory_bandwidth_peak_gbps")->real, 5300.0);
  EXPECT_EQ(find("memory_bandwidth_source")->text, "amd-smi static vram.max_bandwidth");
}

TEST(RocmParse, AmdSmiWrappedListWithoutUuidPinsByHipId) {
  auto r = zl_rocm::parse_amd_smi_list(read_testdata("amd_smi_list_wrapped_no_uuid.json"));
  ASSERT_TRUE(r.ok()) << r.error;
  ASSERT_EQ(r.devices.size(), 1u);
  EXPECT_EQ(r.devices[0].id, "0000:03:00.0");
  EXPECT_EQ(r.devices[0].visibility_value, "0");
  EXPECT_EQ(zl_rocm::merge_amd_smi_static(read_testdata("amd_smi_static_wrapped.json"), r.devices), "");
  EXPECT_EQ(r.devices[0].name, "AMD Radeon RX 7900 XTX");
  EXPECT_EQ(r.devices[0].memory_total_bytes, 24560 * kMiB);  // "24560 MB" as a string
}

TEST(RocmParse, AmdSmiStaticThatIsNotJsonLeavesDevicesAlone) {
  auto r = zl_rocm::parse_amd_smi_list(read_testdata("amd_smi_list_mi300x_8gpu.json"));
  ASSERT_TRUE(r.ok());
  EXPECT_NE(zl_rocm::merge_amd_smi_static("oops", r.devices), "");
  EXPECT_EQ(r.devices[0].name, "unknown AMD GPU");
}

TEST(RocmParse, RocmSmi61LowerCaseKeys) {
  auto r = zl_rocm::parse_rocm_smi_json(read_testdata("rocm_smi_6.1_mi250x_2gpu.json"));
  ASSERT_TRUE(r.ok()) << r.error;
  ASSERT_EQ(r.devices.size(), 2u);
  EXPECT_EQ(r.devices[0].name, "AMD INSTINCT MI250X");  // from "Card series"
  EXPECT_EQ(r.devices[0].id, "0000:C1:00.0");
  EXPECT_EQ(r.devices[0].visibility_value, "GPU-6e3a1f0d4b2c9a87");
  EXPECT_EQ(r.devices[0].memory_total_bytes, 68702699520u);
  EXPECT_EQ(r.devices[1].memory_used_bytes, 52613349376);
  EXPECT_EQ(r.devices[1].utilization_percent, 87);
  EXPECT_EQ(r.devices[1].index, 1);
}

TEST(RocmParse, RocmSmi62TitleCaseKeysAfterAWarning) {
  auto r = zl_rocm::parse_rocm_smi_json(read_testdata("rocm_smi_6.2_mi300x_2gpu.json"));
  ASSERT_TRUE(r.ok()) << r.error;
  ASSERT_EQ(r.devices.size(), 2u);
  EXPECT_EQ(r.devices[0].name, "AMD Instinct MI300X");  // from "Card Series"
  EXPECT_EQ(r.devices[0].visibility_value, "GPU-4b7a5c1e2d3f9e10");
  EXPECT_EQ(r.devices[1].utilization_percent, 100);
  EXPECT_EQ(r.devices[1].memory_total_bytes, 206141652992u);
}

TEST(RocmParse, BothKeyCasesGiveTheSameShape) {
  auto a = zl_rocm::parse_rocm_smi_json(read_testdata("rocm_smi_6.1_mi250x_2gpu.json"));
  auto b = zl_rocm::parse_rocm_smi_json(read_testdata("rocm_smi_6.2_mi300x_2gpu.json"));
  ASSERT_TRUE(a.ok() && b.ok());
  for (const auto* r : {&a, &b}) {
    for (const auto& d : r->devices) {
      EXPECT_NE(d.name, "unknown AMD GPU");
      EXPECT_GT(d.memory_total_bytes, 0u);
      EXPECT_GE(d.memory_used_bytes, 0);
      EXPECT_GE(d.utilization_percent, 0);
      EXPECT_TRUE(zl_kit::starts_with(d.visibility_value, "GPU-"));
    }
  }
}

TEST(RocmParse, ApuWithoutUniqueIdIsPinnedByIndexAndSystemKeyIgnored) {
  auto r = zl_rocm::parse_rocm_smi_json(read_testdata("rocm_smi_6.2_apu_no_uniqueid.json"));
  ASSERT_TRUE(r.ok()) << r.error;
  ASSERT_EQ(r.devices.size(), 1u);
  EXPECT_EQ(r.devices[0].visibility_value, "0");
  EXPECT_EQ(r.devices[0].id, "0000:C4:00.0");
  EXPECT_EQ(r.devices[0].name, "Phoenix3");
}

TEST(RocmParse, UpperCaseCardKeys) {
  auto r = zl_rocm::parse_rocm_smi_json(R"({"CARD3": {"card series": "X", "unique id": "0xAB"}})");
  ASSERT_TRUE(r.ok()) << r.error;
  ASSERT_EQ(r.devices.size(), 1u);
  EXPECT_EQ(r.devices[0].index, 3);
  EXPECT_EQ(r.devices[0].visibility_value, "GPU-ab");
  EXPECT_EQ(r.devices[0].id, "GPU-ab");
}

TEST(RocmParse, UniqueIdToRocrUuid) {
  EXPECT_EQ(zl_rocm::rocr_uuid_from_unique_id("0x5c88007d760374f3"), "GPU-5c88007d760374f3");
  EXPECT_EQ(zl_rocm::rocr_uuid_from_unique_id("N/A"), "");
  EXPECT_EQ(zl_rocm::rocr_uuid_from_unique_id(""), "");
  EXPECT_EQ(zl_rocm::rocr_uuid_from_unique_id("0x"), "");
}

struct Malformed {
  const char* file;
  bool amd_smi;
  const char* says;
};
class RocmParseMalformed : public ::testing::TestWithParam<Malformed> {};
TEST_P(RocmParseMalformed, IsRejectedWithAReason) {
  const std::string text = read_testdata(GetParam().file);
  auto r = GetParam().amd_smi ? zl_rocm::parse_amd_smi_list(text) : zl_rocm::parse_rocm_smi_json(text);
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(r.devices.empty());
  EXPECT_NE(r.error.find(GetParam().says), std::string::npos) << r.error;
}
INSTANTIATE_TEST_SUITE_P(Recorded, RocmParseMalformed,
                         ::testing::Values(Malformed{"amd_smi_list_malformed_truncated.json", true, "invalid JSON"},
                                           Malformed{"amd_smi_list_malformed_no_gpu.json", true, "no \"gpu\" number"},
                                           Malformed{"amd_smi_error_unknown_option.txt", true, "JSON"},
                                           Malformed{"rocm_smi_malformed_use.json", false,
                                                     "GPU use is not a percentage"},
                                           Malformed{"rocm_smi_malformed_text.txt", false, "no JSON object"},
                                           Malformed{"rocm_smi_error_no_driver.txt", false, "no JSON object"}),
                         [](const auto& info) { return file_test_name(info.param.file); });

// ---- the module through the C ABI ----------------------------------------

class RocmModule : public ::testing::Test {
 protected:
  void SetUp() override {
    api = load_backend();
    ASSERT_NE(api, nullptr);
    env.set("ZL_AMD_SMI", "/nonexistent/amd-smi");
    env.set("ZL_ROCM_SMI", "/nonexistent/rocm-smi");
  }
  const zl_backend_api* api = nullptr;
  ScopedEnv env;
  TempDir dir;
};

TEST_F(RocmModule, DescribesItself) {
  EXPECT_STREQ(api->name, "rocm");
  EXPECT_EQ(strings(api->aliases), (std::vector<std::string>{"amd", "hip"}));
  // Never also HIP_VISIBLE_DEVICES: the two filters stack.
  EXPECT_EQ(strings(api->visibility_env), (std::vector<std::string>{"ROCR_VISIBLE_DEVICES"}));
  EXPECT_EQ(capabilities(api),
            (std::map<std::string, std::string>{{"device_events", "1"}, {"torch_profiler", "cuda"}}));
  EXPECT_STREQ(api->torch_device, "cuda");
  EXPECT_STREQ(api->framework_vendor, "amd");
}

TEST_F(RocmModule, AmdSmiListAndStatic) {
  env.set("ZL_AMD_SMI", write_fake_tool(dir, "amd-smi",
                                        {{kListArgs, 0, "amd_smi_list_mi300x_8gpu.json", ""},
                                         {kStaticArgs, 0, "amd_smi_static_mi300x_8gpu.json", ""}}));
  Answer a = enumerate(api);
  ASSERT_FALSE(a.error) << a.message;
  EXPECT_EQ(a.source, "tool");
  ASSERT_EQ(a.devices.size(), 8u);
  EXPECT_EQ(a.devices[3].name, "AMD Instinct MI300X");
  EXPECT_EQ(a.devices[3].visibility_value, "GPU-2d9e8b41c0f7a365");
  EXPECT_EQ(a.devices[3].id, "0000:65:00.0");
}

TEST_F(RocmModule, AmdSmiStaticFailingStillListsDevices) {
  env.set("ZL_AMD_SMI", write_fake_tool(dir, "amd-smi",
                                        {{kListArgs, 0, "amd_smi_list_mi300x_8gpu.json", ""},
                                         {kStaticArgs, 1, "", "amd_smi_error_unknown_option.txt"}}));
  Answer a = enumerate(api);
  ASSERT_FALSE(a.error) << a.message;
  ASSERT_EQ(a.devices.size(), 8u);
  EXPECT_EQ(a.devices[0].name, "unknown AMD GPU");
}

TEST_F(RocmModule, OldAmdSmiFallsBackToRocmSmi62) {
  env.set("ZL_AMD_SMI", write_fake_tool(dir, "amd-smi", {{kListArgs, 2, "", "amd_smi_error_unknown_option.txt"}}));
  env.set("ZL_ROCM_SMI", write_fake_tool(dir, "rocm-smi", {{kRocmSmiArgs, 0, "rocm_smi_6.2_mi300x_2gpu.json", ""}}));
  Answer a = enumerate(api);
  ASSERT_FALSE(a.error) << a.message;
  ASSERT_EQ(a.devices.size(), 2u);
  EXPECT_EQ(a.devices[1].visibility_value, "GPU-8e21d07f44a1c3b9");
}

TEST_F(RocmModule, RocmSmi61) {
  env.set("ZL_ROCM_SMI", write_fake_tool(dir, "rocm-smi", {{kRocmSmiArgs, 0, "rocm_smi_6.1_mi250x_2gpu.json", ""}}));
  Answer a = enumerate(api);
  ASSERT_FALSE(a.error) << a.message;
  ASSERT_EQ(a.devices.size(), 2u);
  EXPECT_EQ(a.devices[0].name, "AMD INSTINCT MI250X");
}

TEST_F(RocmModule, MalformedEverywhereIsAParseError) {
  env.set("ZL_AMD_SMI", write_fake_tool(dir, "amd-smi", {{kListArgs, 0, "amd_smi_list_malformed_truncated.json", ""}}));
  env.set("ZL_ROCM_SMI", write_fake_tool(dir, "rocm-smi", {{kRocmSmiArgs, 0, "rocm_smi_malformed_use.json", ""}}));
  Answer a = enumerate(api);
  ASSERT_TRUE(a.error);
  EXPECT_EQ(a.code, ZL_ERROR_PARSE);
  EXPECT_NE(a.message.find("GPU use is not a percentage"), std::string::npos) << a.message;
}

TEST_F(RocmModule, MalformedAmdSmiButGoodRocmSmiStillWorks) {
  env.set("ZL_AMD_SMI", write_fake_tool(dir, "amd-smi", {{kListArgs, 0, "amd_smi_list_malformed_no_gpu.json", ""}}));
  env.set("ZL_ROCM_SMI", write_fake_tool(dir, "rocm-smi", {{kRocmSmiArgs, 0, "rocm_smi_6.1_mi250x_2gpu.json", ""}}));
  Answer a = enumerate(api);
  ASSERT_FALSE(a.error) << a.message;
  EXPECT_EQ(a.devices.size(), 2u);
}

TEST_F(RocmModule, DriverMissingIsAReason) {
  env.set("ZL_ROCM_SMI", write_fake_tool(dir, "rocm-smi", {{kRocmSmiArgs, 1, "", "rocm_smi_error_no_driver.txt"}}));
  Answer a = enumerate(api);
  ASSERT_FALSE(a.error) << a.message;
  ASSERT_TRUE(a.reason.has_value());
  EXPECT_NE(a.reason->find("Driver not initialized"), std::string::npos) << *a.reason;
}

TEST_F(RocmModule, NoToolsReasonNamesEachOneTried) {
  TempDir empty;
  env.set("ZL_AMD_SMI", std::nullopt);
  env.set("ZL_ROCM_SMI", std::nullopt);
  env.set("PATH", empty.path().string());
  Answer a = enumerate(api);
  ASSERT_FALSE(a.error) << a.message;
  EXPECT_TRUE(a.devices.empty());
  ASSERT_TRUE(a.reason.has_value());
  EXPECT_NE(a.reason->find("amd-smi could not run"), std::string::npos) << *a.reason;
  EXPECT_NE(a.reason->find("rocm-smi could not run"), std::string::npos) << *a.reason;
  EXPECT_NE(a.reason->find("libamd_smi.so"), std::string::npos) << *a.reason;
}

}  // namespace
