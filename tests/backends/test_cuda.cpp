// The CUDA backend: nvidia-smi parser on recorded outputs, then the module
// through the C ABI with a fake nvidia-smi and a fake NVML.
#include "backend_test_util.hpp"
#include "cuda_driver.hpp"
#include "cuda_parse.hpp"
#include "cuda_peaks.hpp"

using namespace zl_test;

namespace {

const char* const kQueryArgs =
    "--query-gpu=index,uuid,name,memory.total,memory.used,utilization.gpu --format=csv,noheader,nounits";

TEST(CudaParse, OneH200) {
  auto r = zl_cuda::parse_nvidia_smi_csv(read_testdata("smi_h200_1gpu.txt"));
  ASSERT_TRUE(r.ok()) << r.error;
  ASSERT_EQ(r.devices.size(), 1u);
  const auto& d = r.devices[0];
  EXPECT_EQ(d.index, 0);
  EXPECT_EQ(d.id, "GPU-967ef875-e3f7-55c2-abf0-64b93b0c7e36");
  EXPECT_EQ(d.name, "NVIDIA H200");
  EXPECT_EQ(d.memory_total_bytes, 143771 * kMiB);
  EXPECT_EQ(d.memory_used_bytes, 0);
  EXPECT_EQ(d.utilization_percent, 0);
  EXPECT_EQ(d.visibility_value, d.id);  // pinned by UUID, not by index
}

TEST(CudaParse, EightH200) {
  auto r = zl_cuda::parse_nvidia_smi_csv(read_testdata("smi_h200_8gpu.txt"));
  ASSERT_TRUE(r.ok()) << r.error;
  ASSERT_EQ(r.devices.size(), 8u);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(r.devices[i].index, i);
    EXPECT_EQ(r.devices[i].visibility_value, r.devices[i].id);
  }
  EXPECT_EQ(r.devices[2].memory_used_bytes, static_cast<int64_t>(81234 * kMiB));
  EXPECT_EQ(r.devices[2].utilization_percent, 97);
  EXPECT_EQ(r.devices[6].utilization_percent, 100);
}

TEST(CudaParse, UnknownValuesBecomeUnknown) {
  auto r = zl_cuda::parse_nvidia_smi_csv(read_testdata("smi_na_fields.txt"));
  ASSERT_TRUE(r.ok()) << r.error;
  ASSERT_EQ(r.devices.size(), 2u);
  EXPECT_EQ(r.devices[0].memory_total_bytes, 97871 * kMiB);
  EXPECT_EQ(r.devices[0].memory_used_bytes, -1);
  EXPECT_EQ(r.devices[0].utilization_percent, -1);
  EXPECT_EQ(r.devices[1].memory_total_bytes, 0u);
  EXPECT_EQ(r.devices[1].memory_used_bytes, -1);
  EXPECT_EQ(r.devices[1].utilization_percent, -1);
  EXPECT_EQ(r.devices[0].name, "NVIDIA GH200 480GB");
}

struct Malformed {
  const char* file;
  const char* says;
};

class CudaParseMalformed : public ::testing::TestWithParam<Malformed> {};

TEST_P(CudaParseMalformed, IsRejectedWithAReason) {
  auto r = zl_cuda::parse_nvidia_smi_csv(read_testdata(GetParam().file));
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(r.devices.empty());
  EXPECT_NE(r.error.find(GetParam().says), std::string::npos) << r.error;
}

INSTANTIATE_TEST_SUITE_P(Recorded, CudaParseMalformed,
                         ::testing::Values(Malformed{"smi_malformed_short.txt", "expected 6 fields"},
                                           Malformed{"smi_malformed_header.txt", "index is not a number"},
                                           Malformed{"smi_malformed_units.txt", "memory.total"},
                                           Malformed{"smi_malformed_duplicate.txt", "duplicate UUID"},
                                           // Error texts never reach the parser (the exit code
                                           // stops them), but must not parse as devices either.
                                           Malformed{"smi_error_no_devices.txt", "expected 6 fields"},
                                           Malformed{"smi_error_unknown_field.txt", "expected 6 fields"},
                                           Malformed{"smi_error_no_driver.txt", "expected 6 fields"}),
                         [](const auto& info) { return file_test_name(info.param.file); });

TEST(CudaParse, EmptyOutputIsNoDevices) {
  auto r = zl_cuda::parse_nvidia_smi_csv("\n");
  EXPECT_TRUE(r.ok());
  EXPECT_TRUE(r.devices.empty());
}

TEST(CudaParse, NameWithCommaSpaceKeepsTheFieldsAroundIt) {
  auto r = zl_cuda::parse_nvidia_smi_csv("3, GPU-11111111-2222-3333-4444-555555555555, Board, Rev 2, 1024, 12, 5\n");
  ASSERT_TRUE(r.ok()) << r.error;
  ASSERT_EQ(r.devices.size(), 1u);
  EXPECT_EQ(r.devices[0].name, "Board, Rev 2");
  EXPECT_EQ(r.devices[0].memory_total_bytes, 1024 * kMiB);
  EXPECT_EQ(r.devices[0].utilization_percent, 5);
}

TEST(CudaParse, NvmlDeviceClampsUtilization) {
  auto d = zl_cuda::device_from_nvml(1, "", "GPU-x", 10, -1, 250);
  EXPECT_EQ(d.name, "unknown NVIDIA GPU");
  EXPECT_EQ(d.utilization_percent, -1);
  EXPECT_EQ(d.visibility_value, "GPU-x");
}

// ---- the module through the C ABI ----------------------------------------

class CudaModule : public ::testing::Test {
 protected:
  void SetUp() override {
    api = load_backend();
    ASSERT_NE(api, nullptr);
    env.set("ZL_CUDA_NVML_LIB", std::nullopt);
    env.set("ZL_CUDA_NO_NVML", "1");
    env.set("ZL_CUDA_SMI", std::nullopt);
    env.set("ZL_CUDA_DRIVER_LIB", std::nullopt);
  }
  std::string smi(int rc, const std::string& out, const std::string& err = "") {
    return write_fake_tool(dir, "nvidia-smi", {{kQueryArgs, rc, out, err}});
  }
  const zl_backend_api* api = nullptr;
  ScopedEnv env;
  TempDir dir;
};

// What the ABI requires of every table (major, sizes, strings) is the
// conformance kit's (tests/conform); this is what makes it the CUDA backend.
TEST_F(CudaModule, DescribesItself) {
  EXPECT_STREQ(api->name, "cuda");
  EXPECT_EQ(strings(api->aliases), (std::vector<std::string>{"nvidia", "gpu"}));
  EXPECT_EQ(strings(api->visibility_env), (std::vector<std::string>{"CUDA_VISIBLE_DEVICES"}));
  EXPECT_EQ(capabilities(api), (std::map<std::string, std::string>{{"graph_capture", "torch.cuda.CUDAGraph"},
                                                                   {"cluster_fix", "1"},
                                                                   {"device_events", "1"},
                                                                   {"torch_profiler", "cuda"}}));
  EXPECT_STREQ(api->torch_device, "cuda");
  EXPECT_STREQ(api->framework_vendor, "nvidia");
}

TEST_F(CudaModule, ToolPathListsEightGpus) {
  env.set("ZL_CUDA_SMI", smi(0, "smi_h200_8gpu.txt"));
  Answer a = enumerate(api);
  ASSERT_FALSE(a.error) << a.message;
  EXPECT_EQ(a.source, "tool");
  ASSERT_EQ(a.devices.size(), 8u);
  EXPECT_EQ(a.devices[0].id, "GPU-967ef875-e3f7-55c2-abf0-64b93b0c7e36");
  EXPECT_EQ(a.devices[0].visibility_value, a.devices[0].id);
  EXPECT_EQ(a.devices[7].index, 7);
  EXPECT_FALSE(a.reason.has_value());
}

TEST_F(CudaModule, NoDevicesExit6IsAReasonNotAnError) {
  env.set("ZL_CUDA_SMI", smi(6, "smi_error_no_devices.txt"));
  Answer a = enumerate(api);
  ASSERT_FALSE(a.error) << a.message;
  EXPECT_TRUE(a.devices.empty());
  ASSERT_TRUE(a.reason.has_value());
  EXPECT_NE(a.reason->find("exited 6: No devices were found"), std::string::npos) << *a.reason;
  EXPECT_NE(a.reason->find("ZL_CUDA_NO_NVML=1"), std::string::npos) << *a.reason;
  EXPECT_EQ(a.reason->find('\n'), std::string::npos);
}

TEST_F(CudaModule, UnknownFieldExit2IsAReason) {
  env.set("ZL_CUDA_SMI", smi(2, "smi_error_unknown_field.txt"));
  Answer a = enumerate(api);
  ASSERT_FALSE(a.error) << a.message;
  ASSERT_TRUE(a.reason.has_value());
  EXPECT_NE(a.reason->find("exited 2: Field \"memory.totl\" is not a valid field"), std::string::npos) << *a.reason;
}

TEST_F(CudaModule, DriverMissingExit9OnStderrIsAReason) {
  env.set("ZL_CUDA_SMI", smi(9, "", "smi_error_no_driver.txt"));
  Answer a = enumerate(api);
  ASSERT_FALSE(a.error) << a.message;
  ASSERT_TRUE(a.reason.has_value());
  EXPECT_NE(a.reason->find("couldn't communicate with the NVIDIA driver"), std::string::npos) << *a.reason;
}

TEST_F(CudaModule, MalformedOutputIsAParseError) {
  env.set("ZL_CUDA_SMI", smi(0, "smi_malformed_short.txt"));
  Answer a = enumerate(api);
  ASSERT_TRUE(a.error);
  EXPECT_EQ(a.code, ZL_ERROR_PARSE);
  EXPECT_NE(a.message.find("expected 6 fields"), std::string::npos) << a.message;
}

TEST_F(CudaModule, NoDriverAndNoToolReasonNamesBoth) {
  TempDir empty;
  env.set("ZL_CUDA_NO_NVML", std::nullopt);
  env.set("ZL_CUDA_NVML_LIB", "/nonexistent/libnvidia-ml.so.1");
  env.set("PATH", empty.path().string());
  Answer a = enumerate(api);
  ASSERT_FALSE(a.error) << a.message;
  EXPECT_TRUE(a.devices.empty());
  ASSERT_TRUE(a.reason.has_value());
  EXPECT_NE(a.reason->find("libnvidia-ml.so.1 not loadable"), std::string::npos) << *a.reason;
  EXPECT_NE(a.reason->find("nvidia-smi could not run"), std::string::npos) << *a.reason;
}

TEST_F(CudaModule, NvmlPathWinsOverTheTool) {
  env.set("ZL_CUDA_NO_NVML", std::nullopt);
  env.set("ZL_CUDA_NVML_LIB", ZL_FAKE_NVML);
  env.set("FAKE_NVML_COUNT", "3");
  env.set("ZL_CUDA_SMI", smi(0, "smi_h200_8gpu.txt"));
  Answer a = enumerate(api);
  ASSERT_FALSE(a.error) << a.message;
  EXPECT_EQ(a.source, "library");
  ASSERT_EQ(a.devices.size(), 3u);
  EXPECT_EQ(a.devices[2].id, "GPU-00000000-0000-0000-0000-000000000002");
  EXPECT_EQ(a.devices[2].visibility_value, a.devices[2].id);
  EXPECT_EQ(a.devices[2].name, "NVIDIA H200");
  EXPECT_EQ(a.devices[2].memory_total_bytes, 143771 * kMiB);
  EXPECT_EQ(a.devices[2].memory_used_bytes, static_cast<int64_t>(2 * kMiB));
  EXPECT_EQ(a.devices[2].utilization_percent, 20);
}

TEST_F(CudaModule, NvmlWithoutUtilizationSaysUnknown) {
  env.set("ZL_CUDA_NO_NVML", std::nullopt);
  env.set("ZL_CUDA_NVML_LIB", ZL_FAKE_NVML);
  env.set("FAKE_NVML_NO_UTIL", "1");
  Answer a = enumerate(api);
  ASSERT_FALSE(a.error) << a.message;
  ASSERT_EQ(a.devices.size(), 2u);
  EXPECT_EQ(a.devices[0].utilization_percent, -1);
}

TEST_F(CudaModule, NvmlInitFailureFallsBackToTheTool) {
  env.set("ZL_CUDA_NO_NVML", std::nullopt);
  env.set("ZL_CUDA_NVML_LIB", ZL_FAKE_NVML);
  env.set("FAKE_NVML_INIT_RC", "9");
  env.set("ZL_CUDA_SMI", smi(6, "smi_error_no_devices.txt"));
  Answer a = enumerate(api);
  ASSERT_FALSE(a.error) << a.message;
  ASSERT_TRUE(a.reason.has_value());
  EXPECT_NE(a.reason->find("nvmlInit_v2 returned 9 (Driver Not Loaded)"), std::string::npos) << *a.reason;
  EXPECT_NE(a.reason->find("No devices were found"), std::string::npos) << *a.reason;
}

TEST_F(CudaModule, NoNvmlSkipsEvenAWorkingLibrary) {
  env.set("ZL_CUDA_NVML_LIB", ZL_FAKE_NVML);
  env.set("ZL_CUDA_SMI", smi(0, "smi_h200_1gpu.txt"));
  Answer a = enumerate(api);
  ASSERT_FALSE(a.error) << a.message;
  EXPECT_EQ(a.source, "tool");
  ASSERT_EQ(a.devices.size(), 1u);
}

TEST_F(CudaModule, LibraryWithoutNvmlSymbolsIsSkipped) {
  env.set("ZL_CUDA_NO_NVML", std::nullopt);
  env.set("ZL_CUDA_NVML_LIB", "libm.so.6");
  env.set("ZL_CUDA_SMI", smi(0, "smi_h200_1gpu.txt"));
  Answer a = enumerate(api);
  ASSERT_FALSE(a.error) << a.message;
  EXPECT_EQ(a.source, "tool");
  EXPECT_EQ(a.devices.size(), 1u);
}

// ABI 1.2 through NVML: the attributes an H200 answers, the peaks derived
// from them, and the state, with the fake NVML answering as an H200 would.
TEST_F(CudaModule, NvmlAttributesAndPeaks) {
  env.set("ZL_CUDA_NO_NVML", std::nullopt);
  env.set("ZL_CUDA_NVML_LIB", ZL_FAKE_NVML);
  env.set("FAKE_NVML_COUNT", "1");
  Answer a = enumerate(api);
  ASSERT_FALSE(a.error) << a.message;
  ASSERT_EQ(a.devices.size(), 1u);
  const auto& at = a.devices[0].attributes;
  EXPECT_EQ(at.at("architecture"), "hopper");
  EXPECT_EQ(at.at("compute_capability"), "9.0");
  EXPECT_EQ(at.at("driver_version"), "580.159.04");
  EXPECT_EQ(at.at("runtime_version"), "13.0");
  EXPECT_EQ(at.at("compute_units"), "132");
  EXPECT_EQ(at.at("clock_sm_max_mhz"), "1980");
  // NVML's answer on a real H200 (6016, not the 6144 of six full stacks):
  // 3201 MHz x 2 (double data rate) x 6016 bits / 8 = 4814.3 GB/s, the
  // figure `zlcore devices` printed there (datasheet: 4.8 TB/s).
  EXPECT_EQ(at.at("memory_bus_width_bits"), "6016");
  EXPECT_EQ(at.at("memory_bandwidth_peak_gbps"), "4814.3");
  // 132 SMs x 1980 MHz x 4096 dense fp16 operations per SM per clock.
  EXPECT_EQ(at.at("compute_peak_tflops.float16"), "1070.53");
  EXPECT_EQ(at.at("power_limit_w"), "700");
  EXPECT_EQ(at.at("ecc_enabled"), "1");
}

// The L2 size comes from the driver (NVML does not say it), matched to NVML's
// GPUs by UUID: a GPU the driver does not see (hidden by
// CUDA_VISIBLE_DEVICES in zlcore's environment) has no L2 attribute rather
// than another GPU's.
TEST_F(CudaModule, L2SizeComesFromTheDriverMatchedByUuid) {
  env.set("ZL_CUDA_NO_NVML", std::nullopt);
  env.set("ZL_CUDA_NVML_LIB", ZL_FAKE_NVML);
  env.set("ZL_CUDA_DRIVER_LIB", ZL_FAKE_CUDA_DRIVER);
  env.set("FAKE_NVML_COUNT", "3");
  Answer a = enumerate(api);
  ASSERT_FALSE(a.error) << a.message;
  ASSERT_EQ(a.devices.size(), 3u);
  EXPECT_EQ(a.devices[0].attributes.at("l2_cache_bytes"), "62914560");
  EXPECT_EQ(a.devices[1].attributes.at("l2_cache_bytes"), "62914560");
  EXPECT_EQ(a.devices[2].attributes.count("l2_cache_bytes"), 0u);
}

TEST_F(CudaModule, NoDriverLeavesTheL2SizeOut) {
  env.set("ZL_CUDA_NO_NVML", std::nullopt);
  env.set("ZL_CUDA_NVML_LIB", ZL_FAKE_NVML);
  env.set("ZL_CUDA_DRIVER_LIB", "/nonexistent/libcuda.so.1");
  Answer a = enumerate(api);
  ASSERT_FALSE(a.error) << a.message;
  ASSERT_EQ(a.devices.size(), 2u);
  EXPECT_EQ(a.devices[0].attributes.count("l2_cache_bytes"), 0u);
  EXPECT_EQ(a.devices[0].attributes.at("compute_units"), "132");  // the rest still there
}

TEST(CudaDriver, UuidBytesPrintAsNvmlPrintsThem) {
  const unsigned char b[16] = {0x96, 0x7e, 0xf8, 0x75, 0xe3, 0xf7, 0x55, 0xc2,
                               0xab, 0xf0, 0x64, 0xb9, 0x3b, 0x0c, 0x7e, 0x36};
  EXPECT_EQ(zl_cuda::uuid_text(b), "GPU-967ef875-e3f7-55c2-abf0-64b93b0c7e36");
}

TEST_F(CudaModule, NvmlStateNamesThrottleReasons) {
  env.set("ZL_CUDA_NO_NVML", std::nullopt);
  env.set("ZL_CUDA_NVML_LIB", ZL_FAKE_NVML);
  auto st = query_state(api, 1, "GPU-00000000-0000-0000-0000-000000000001");
  EXPECT_EQ(st.count("error"), 0u) << st["error"];
  EXPECT_EQ(st["clock_sm_mhz"], "1755");
  EXPECT_EQ(st["power_draw_w"], "650.25");
  EXPECT_EQ(st["temperature_c"], "61");
  EXPECT_EQ(st["throttle_reasons"], "sw_power_cap");
  // A UUID that does not match the index is refused, not answered for another GPU.
  auto wrong = query_state(api, 0, "GPU-00000000-0000-0000-0000-000000000001");
  EXPECT_NE(wrong["error"].find("no GPU with index 0"), std::string::npos) << wrong["error"];
}

TEST_F(CudaModule, AnOldDriverLeavesDerivedFiguresOut) {
  env.set("ZL_CUDA_NO_NVML", std::nullopt);
  env.set("ZL_CUDA_NVML_LIB", ZL_FAKE_NVML);
  env.set("FAKE_NVML_BASIC", "1");
  Answer a = enumerate(api);
  ASSERT_EQ(a.devices.size(), 2u);
  const auto& at = a.devices[0].attributes;
  EXPECT_EQ(at.count("architecture"), 0u);
  EXPECT_EQ(at.count("compute_peak_tflops.float16"), 0u);  // no capability, no per-SM rate
  EXPECT_EQ(at.count("memory_bandwidth_peak_gbps"), 1u);   // clock and width still known
}

// The attribute fields every H200 answer has the same: driver, capability,
// power limit, ECC.
void expect_h200_attributes(const char* file) {
  zl_cuda::ValuesByUuid attrs;
  std::string error;
  ASSERT_TRUE(zl_cuda::parse_smi_attributes(read_testdata(file), attrs, error)) << error;
  ASSERT_EQ(attrs.size(), 1u);
  const auto& a = attrs.begin()->second;
  ASSERT_EQ(a.size(), 7u);
  EXPECT_EQ(a[0].text, "580.159.04");
  EXPECT_EQ(a[1].text, "9.0");
  EXPECT_EQ(a[4].real, 700.0);
  EXPECT_EQ(a[5].integer, 1);  // ECC Enabled
}

}  // namespace

TEST(CudaParse, SmiAttributesAndStateByUuid) {
  expect_h200_attributes("smi_attributes_h200.txt");
  zl_cuda::ValuesByUuid state;
  std::string error;
  ASSERT_TRUE(zl_cuda::parse_smi_state(read_testdata("smi_state_h200.txt"), state, error)) << error;
  const auto& s = state.begin()->second;
  EXPECT_EQ(s[0].integer, 1755);
  EXPECT_EQ(s[4].text, "sw_power_cap");
  EXPECT_EQ(s[6].integer, 1024 * static_cast<int64_t>(kMiB));
  EXPECT_FALSE(zl_cuda::parse_smi_state("GPU-x, 1, 2\n", state, error));
  EXPECT_EQ(error, "line 1: expected 8 fields, got 3");
}

// nvidia-smi's own answers on an H200 (driver 580.159.04, idle),
// recorded by `scripts/acceptance.sh abi` with the backend's field lists.
TEST(CudaParse, RecordedH200Answers) {
  expect_h200_attributes("smi_attributes_h200_recorded.txt");
  zl_cuda::ValuesByUuid state;
  std::string error;
  ASSERT_TRUE(zl_cuda::parse_smi_state(read_testdata("smi_state_h200_idle_recorded.txt"), state, error)) << error;
  ASSERT_EQ(state.count("GPU-765d8652-190c-2afc-a912-c353311f4958"), 1u);
  const auto& s = state.begin()->second;
  EXPECT_EQ(s[0].integer, 1980);
  EXPECT_EQ(s[1].integer, 3201);
  EXPECT_EQ(s[4].text, "none");  // 0x0000000000000000
}

TEST(CudaPeaks, ThrottleReasonNamesAndUnknownCapabilities) {
  EXPECT_EQ(zl_cuda::throttle_reason_names(0), "none");
  EXPECT_EQ(zl_cuda::throttle_reason_names(0x1 | 0x40), "idle,hw_thermal");
  EXPECT_EQ(zl_cuda::throttle_reason_names(1ull << 40), "bit40");
  EXPECT_TRUE(zl_cuda::compute_peaks(7, 5, 68, 1800).empty());  // turing: no published per-SM rate here
  EXPECT_EQ(zl_cuda::architecture_of(8, 9), "ada");
  EXPECT_EQ(zl_cuda::memory_bandwidth_gbps(0, 6144), 0);
}
