// ABI negotiation against hand-built tables: no plugin file involved, so every
// field combination is cheap to state.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdlib>
#include <string>
#include <vector>

#include "zlcore/backend.hpp"

namespace {

zl_error* no_devices(zl_device_list** out) {
  *out = nullptr;
  return nullptr;
}
void destroy_list(zl_device_list*) {}
void destroy_error(zl_error*) {}

zl_backend_api table() {
  zl_backend_api api{};
  api.struct_size = sizeof(zl_backend_api);
  api.abi_major = ZL_BACKEND_ABI_MAJOR;
  api.abi_minor = ZL_BACKEND_ABI_MINOR;
  api.name = "hand";
  api.enumerate_devices = no_devices;
  api.device_list_destroy = destroy_list;
  api.error_destroy = destroy_error;
  return api;
}

TEST(Abi, CurrentTableIsAccepted) {
  zl_backend_api api = table();
  EXPECT_EQ(zl::negotiate_abi(&api), "");
}

TEST(Abi, NullTable) { EXPECT_EQ(zl::negotiate_abi(nullptr), "entry returned NULL"); }

TEST(Abi, MajorMustMatchExactly) {
  zl_backend_api api = table();
  api.abi_major = ZL_BACKEND_ABI_MAJOR + 1;
  EXPECT_EQ(zl::negotiate_abi(&api), "ABI major 2 does not match the core's 1");
  api.abi_major = 0;
  EXPECT_EQ(zl::negotiate_abi(&api), "ABI major 0 does not match the core's 1");
}

TEST(Abi, StructTooSmallForVersionOrForMinorZero) {
  zl_backend_api api = table();
  api.struct_size = 8;
  EXPECT_EQ(zl::negotiate_abi(&api), "table struct_size 8 is too small to hold the ABI version");
  api.struct_size = offsetof(zl_backend_api, error_destroy);
  EXPECT_NE(zl::negotiate_abi(&api).find("smaller than the ABI 1.0 table"), std::string::npos);
}

TEST(Abi, OlderMinorWithSmallerStructIsAcceptedAndItsMissingFieldsIgnored) {
  zl_backend_api api = table();
  api.abi_minor = 0;
  api.struct_size = offsetof(zl_backend_api, backend_version);
  api.backend_version = "garbage the core must not read";
  ASSERT_EQ(zl::negotiate_abi(&api), "");
  zl::Backend b(&api, "hand.so");
  EXPECT_EQ(b.backend_version(), "");
  EXPECT_EQ(b.abi(), "1.0");
}

TEST(Abi, NewerMinorWithLargerStructIsAccepted) {
  struct {
    zl_backend_api api;
    void* future[3];
  } bigger{};
  bigger.api = table();
  bigger.api.struct_size = sizeof bigger;
  bigger.api.abi_minor = ZL_BACKEND_ABI_MINOR + 5;
  bigger.api.backend_version = "v9";
  ASSERT_EQ(zl::negotiate_abi(&bigger.api), "");
  zl::Backend b(&bigger.api, "hand.so");
  EXPECT_EQ(b.backend_version(), "v9");
}

TEST(Abi, RequiredEntriesMustBePresent) {
  zl_backend_api api = table();
  api.enumerate_devices = nullptr;
  EXPECT_NE(zl::negotiate_abi(&api).find("lacks a required entry"), std::string::npos);
  api = table();
  api.name = nullptr;
  EXPECT_EQ(zl::negotiate_abi(&api), "table has no name");
  api = table();
  api.capability_count = 2;
  EXPECT_EQ(zl::negotiate_abi(&api), "table declares 2 capabilities but no array");
}

TEST(Abi, NullOptionalEntriesReadAsEmpty) {
  zl_backend_api api = table();  // aliases, visibility, capabilities, vendor all NULL
  zl::Backend b(&api, "hand.so");
  EXPECT_TRUE(b.aliases().empty());
  EXPECT_TRUE(b.visibility_env().empty());
  EXPECT_TRUE(b.capabilities().empty());
  EXPECT_EQ(b.framework_vendor(), "");
  // A backend that hands back no list is reported, not dereferenced.
  zl::DeviceQuery q = b.enumerate();
  EXPECT_TRUE(q.devices.empty());
  EXPECT_EQ(q.reason, "backend returned no device list");
}

TEST(Abi, CapabilitiesParseAsKeyValueWithFlagDefault) {
  static const zl_capability caps[] = {
      {"graph_capture", "torch.cuda.CUDAGraph"}, {"device_events", nullptr}, {"", "x"}, {"cluster_fix", "1"}};
  zl_backend_api api = table();
  api.capabilities = caps;
  api.capability_count = 4;
  zl::Backend b(&api, "hand.so");
  std::map<std::string, std::string> want{
      {"graph_capture", "torch.cuda.CUDAGraph"}, {"device_events", "1"}, {"cluster_fix", "1"}};
  EXPECT_EQ(b.capabilities(), want);
}

// negotiate_abi reads the table once and the Backend reads it again: a
// table whose strings change in between is read as text all the same, and a
// visibility variable that turned into control bytes pins nothing.
TEST(Abi, TableChangedAfterNegotiationKeepsNoControlBytes) {
  static char name[] = "hand";
  static char alias[] = "h";
  static char var[] = "HAND_VISIBLE";
  static const char* aliases[] = {alias, nullptr};
  static const char* vars[] = {var, nullptr};
  zl_backend_api api = table();
  api.name = name;
  api.aliases = aliases;
  api.visibility_env = vars;
  ASSERT_EQ(zl::negotiate_abi(&api), "");
  name[1] = '\x1b';
  alias[0] = '\x07';
  var[0] = '\n';
  zl::Backend b(&api, "hand.so");
  EXPECT_NE(b.table_problem(), "") << "the loader rejects it";
  EXPECT_EQ(b.name(), "h\\x1bnd");
  EXPECT_EQ(b.aliases(), std::vector<std::string>{"\\x07"});
  EXPECT_TRUE(b.visibility_env().empty());
}

TEST(Abi, ErrorsAreValuesFreedByTheBackend) {
  static int destroyed = 0;
  zl_backend_api api = table();
  api.enumerate_devices = [](zl_device_list** out) -> zl_error* {
    *out = nullptr;
    static zl_error e{sizeof(zl_error), ZL_ERROR_UNAVAILABLE, "driver exploded"};
    return &e;
  };
  api.error_destroy = [](zl_error*) { ++destroyed; };
  zl::Backend b(&api, "hand.so");
  zl::DeviceQuery q = b.enumerate();
  EXPECT_EQ(q.error, "driver exploded");
  EXPECT_EQ(q.reason, "driver exploded");
  EXPECT_EQ(destroyed, 1);
}

}  // namespace
