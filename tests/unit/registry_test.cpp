// Backend selection by name and alias, over the backends zlcore ships.
#include <gtest/gtest.h>

#include "zlcore/errors.hpp"
#include "zlcore/registry.hpp"

namespace {

const zl::Registry& shipped() {
  static zl::Registry reg(zl::load_backends(ZL_SHIPPED_PLUGIN_DIR));
  return reg;
}

TEST(Registry, ShipsFiveBackendsAndRejectsNothing) {
  std::vector<std::string> names;
  for (const zl::Backend& b : shipped().backends()) names.push_back(b.name());
  EXPECT_EQ(names, (std::vector<std::string>{"ascend", "cuda", "host", "musa", "rocm"}));
  EXPECT_TRUE(shipped().rejected().empty());
}

TEST(Registry, AliasesResolveCaseInsensitively) {
  const std::map<std::string, std::string> want{
      {"cuda", "cuda"},  {"NVIDIA", "cuda"},   {"Gpu", "cuda"},      {"rocm", "rocm"}, {"AMD", "rocm"},
      {"hip", "rocm"},   {"musa", "musa"},     {"MThreads", "musa"}, {"mt", "musa"},   {"ascend", "ascend"},
      {"NPU", "ascend"}, {"huawei", "ascend"}, {"host", "host"},     {"CPU", "host"}};
  for (const auto& [alias, name] : want) {
    const zl::Backend* b = shipped().find(alias);
    ASSERT_NE(b, nullptr) << alias;
    EXPECT_EQ(b->name(), name) << alias;
  }
}

TEST(Registry, UnknownNameListsWhatIsLoaded) {
  EXPECT_EQ(shipped().find("tpu"), nullptr);
  try {
    shipped().select("tpu", "--backend");
    FAIL() << "expected UsageError";
  } catch (const zl::UsageError& e) {
    EXPECT_STREQ(e.what(), "unknown backend 'tpu' (--backend); loaded backends: ascend, cuda, host, musa, rocm");
  }
  EXPECT_THROW(shipped().select("", "--backend"), zl::UsageError);
}

TEST(Registry, VisibilityVariablePerBackend) {
  const std::map<std::string, std::vector<std::string>> want{{"cuda", {"CUDA_VISIBLE_DEVICES"}},
                                                             {"rocm", {"ROCR_VISIBLE_DEVICES"}},
                                                             {"musa", {"MUSA_VISIBLE_DEVICES"}},
                                                             {"ascend", {"ASCEND_RT_VISIBLE_DEVICES"}},
                                                             {"host", {}}};
  for (const auto& [name, vars] : want) EXPECT_EQ(shipped().find(name)->visibility_env(), vars) << name;
}

TEST(Registry, CapabilitiesAndPythonNamesPerBackend) {
  const zl::Backend* cuda = shipped().find("cuda");
  EXPECT_EQ(cuda->capabilities().at("graph_capture"), "torch.cuda.CUDAGraph");
  EXPECT_EQ(cuda->capabilities().count("cluster_fix"), 1u);
  EXPECT_EQ(cuda->torch_device(), "cuda");
  EXPECT_EQ(cuda->framework_vendor(), "nvidia");
  EXPECT_EQ(shipped().find("musa")->torch_device(), "musa");
  EXPECT_EQ(shipped().find("ascend")->torch_device(), "npu");
  EXPECT_EQ(shipped().find("rocm")->framework_vendor(), "amd");
  EXPECT_TRUE(shipped().find("host")->capabilities().empty());
}

// Two backends claiming one alias: the later file is rejected whole, naming
// the owner, and the earlier keeps every name.
TEST(Registry, CollidingAliasRejectsTheLaterFile) {
  zl::LoadReport merged = zl::load_backends(ZL_SHIPPED_PLUGIN_DIR);
  zl::LoadReport vendor = zl::load_backends(ZL_VENDOR_DIR);
  for (zl::Backend& b : vendor.backends) merged.backends.push_back(std::move(b));
  zl::LoadReport again = zl::load_backends(ZL_SHIPPED_PLUGIN_DIR);
  for (zl::Backend& b : again.backends) merged.backends.push_back(std::move(b));
  zl::Registry reg(std::move(merged));
  EXPECT_EQ(reg.backends().size(), 7u);  // five shipped + fakegpu + vendorx
  EXPECT_EQ(reg.rejected().size(), 5u);  // the second copy of each shipped one
  for (const zl::Rejected& r : reg.rejected()) EXPECT_NE(r.reason.find("is already taken by"), std::string::npos);
}

}  // namespace
