// ABI 1.2 against 1.1: one fake backend source built as a 1.1 backend (1.1
// table, 1.1 device layout), as a 1.2 one, and with a device layout from a
// future minor, all loaded into this core in one process.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "zlcore/backend.hpp"
#include "zlcore/loader.hpp"
#include "zlcore/registry.hpp"

namespace {

zl::LoadReport load_minors() { return zl::load_backends(ZL_MINORS_DIR); }

const zl::Backend* find(const zl::LoadReport& r, const std::string& name) {
  for (const zl::Backend& b : r.backends) {
    if (b.name() == name) return &b;
  }
  return nullptr;
}

// Every device in order, with the fields a wrong stride would garble.
void expect_two_fake_devices(const zl::DeviceQuery& q) {
  ASSERT_EQ(q.devices.size(), 2u) << q.reason << q.error;
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(q.devices[i].index, i);
    EXPECT_EQ(q.devices[i].id, "FAKE-000" + std::to_string(i));
    EXPECT_EQ(q.devices[i].name, "Fake Accelerator");
    EXPECT_EQ(q.devices[i].memory_total_bytes, uint64_t{16} << 30);
    EXPECT_EQ(q.devices[i].visibility_value, std::to_string(i));
  }
}

TEST(AbiMinors, A11BackendAndA12BackendLoadIntoOneCore) {
  zl::LoadReport r = load_minors();
  const zl::Backend* v11 = find(r, "vone");
  const zl::Backend* v12 = find(r, "vtwo");
  ASSERT_NE(v11, nullptr);
  ASSERT_NE(v12, nullptr);
  EXPECT_EQ(v11->abi(), "1.1");
  EXPECT_EQ(v12->abi(), "1.2");
  EXPECT_EQ(v11->backend_version(), "fake vone");
}

TEST(AbiMinors, A11DeviceArrayIndexesByItsOwnStride) {
  zl::LoadReport r = load_minors();
  const zl::Backend* v11 = find(r, "vone");
  ASSERT_NE(v11, nullptr);
  zl::DeviceQuery q = v11->enumerate();
  expect_two_fake_devices(q);
  // The 1.1 struct ends before attributes: none are read from past its end.
  EXPECT_TRUE(q.devices[0].attributes.empty());
  EXPECT_TRUE(q.devices[1].attributes.empty());
}

TEST(AbiMinors, ANewerDeviceArrayIndexesByItsOwnStride) {
  zl::LoadReport r = load_minors();
  const zl::Backend* wide = find(r, "wide");
  ASSERT_NE(wide, nullptr);
  zl::DeviceQuery q = wide->enumerate();
  expect_two_fake_devices(q);
  EXPECT_EQ(q.devices[1].attributes.size(), 5u);
}

TEST(AbiMinors, A12BackendGivesTypedAttributes) {
  zl::LoadReport r = load_minors();
  const zl::Backend* v12 = find(r, "vtwo");
  ASSERT_NE(v12, nullptr);
  zl::DeviceQuery q = v12->enumerate();
  expect_two_fake_devices(q);
  const zl::NamedValues& a = q.devices[1].attributes;
  const zl::NamedValue* arch = zl::find_value(a, "architecture");
  ASSERT_NE(arch, nullptr);
  EXPECT_EQ(arch->display(), "fakearch");
  const zl::NamedValue* bw = zl::find_value(a, "memory_bandwidth_peak_gbps");
  ASSERT_NE(bw, nullptr);
  EXPECT_EQ(bw->type, ZL_VALUE_DOUBLE);
  EXPECT_DOUBLE_EQ(*bw->number(), 1000.0);
  const zl::NamedValue* ecc = zl::find_value(a, "ecc_enabled");
  ASSERT_NE(ecc, nullptr);
  EXPECT_EQ(ecc->display(), "true");
}

TEST(AbiMinors, StateQueryOnlyWhereTheBackendOffersIt) {
  zl::LoadReport r = load_minors();
  const zl::Backend* v11 = find(r, "vone");
  const zl::Backend* v12 = find(r, "vtwo");
  ASSERT_NE(v11, nullptr);
  ASSERT_NE(v12, nullptr);
  EXPECT_FALSE(v11->has_state());
  ASSERT_TRUE(v12->has_state());
  zl::DeviceQuery q = v12->enumerate();
  ASSERT_EQ(q.devices.size(), 2u);
  zl::DeviceState st = v12->query_state(q.devices[1]);
  EXPECT_EQ(st.error, "");
  ASSERT_NE(zl::find_value(st.values, "clock_sm_mhz"), nullptr);
  EXPECT_EQ(zl::find_value(st.values, "clock_sm_mhz")->integer, 1501);
  EXPECT_EQ(zl::find_value(st.values, "throttle_reasons")->text, "none");
  zl::DeviceState none = v11->query_state(q.devices[0]);
  EXPECT_NE(none.error.find("has no device-state query"), std::string::npos) << none.error;
}

TEST(AbiMinors, UnknownExtensionsInTheChainAreRecordedAndSkipped) {
  zl::LoadReport r = load_minors();
  const zl::Backend* v12 = find(r, "vtwo");
  ASSERT_NE(v12, nullptr);
  EXPECT_EQ(v12->extensions(), (std::vector<uint32_t>{0x7fff0001u, 0x7fff0002u}));
  // Skipped means the backend still works in full.
  EXPECT_EQ(v12->enumerate().devices.size(), 2u);
  const zl::Backend* v11 = find(r, "vone");
  ASSERT_NE(v11, nullptr);
  EXPECT_TRUE(v11->extensions().empty());  // past a 1.1 table's end: never read
}

TEST(AbiMinors, ADeviceWithoutAPinValueIsRejectedWithTheReason) {
  zl::LoadReport r = load_minors();
  const zl::Backend* novis = find(r, "novis");
  ASSERT_NE(novis, nullptr);
  zl::DeviceQuery q = novis->enumerate();
  ASSERT_EQ(q.devices.size(), 1u);
  EXPECT_EQ(q.devices[0].id, "FAKE-0000");
  ASSERT_EQ(q.rejected.size(), 1u);
  EXPECT_EQ(q.rejected[0].device.id, "FAKE-0001");
  EXPECT_EQ(q.rejected[0].reason,
            "device [1] FAKE-0001 has no visibility_value, but the backend pins with FAKE_VISIBLE_DEVICES: a child "
            "would see no device");
}

}  // namespace
