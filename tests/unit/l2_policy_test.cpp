// The L2 policy's words and what a device must report for `cold`.
#include <gtest/gtest.h>

#include "zlcore/errors.hpp"
#include "zlcore/l2_policy.hpp"

namespace {

zl::Device device_with(std::optional<zl::NamedValue> l2) {
  zl::Device d;
  d.index = 3;
  d.id = "GPU-x";
  d.name = "NVIDIA H200";
  if (l2) d.attributes.push_back(*l2);
  return d;
}

zl::NamedValue int_value(int64_t v) {
  zl::NamedValue n;
  n.name = "l2_cache_bytes";
  n.type = ZL_VALUE_INT64;
  n.integer = v;
  return n;
}

TEST(L2Policy, WarmColdAndUnsetAreTheWordsAndTheErrorNamesTheInputAsGiven) {
  EXPECT_EQ(zl::parse_l2_policy("", "--l2 "), "warm");
  EXPECT_EQ(zl::parse_l2_policy("warm", "--l2 "), "warm");
  EXPECT_EQ(zl::parse_l2_policy("cold", "ZL_L2="), "cold");
  try {
    zl::parse_l2_policy("Cold!", "ZL_L2=");
    FAIL();
  } catch (const zl::UsageError& e) {
    EXPECT_STREQ(e.what(),
                 "ZL_L2='Cold!' is not allowed; use cold (the L2 cleared before each timed call) or warm (left as the "
                 "calls before left it)");
  }
  EXPECT_THROW(zl::parse_l2_policy("hot", "--l2 "), zl::UsageError);
  // Empty is an unset variable's value; as a flag's value it is a typo.
  EXPECT_THROW(zl::parse_l2_policy("", "--l2 ", false), zl::UsageError);
}

TEST(L2Policy, OnlyAPositiveInt64IsAnL2Size) {
  EXPECT_EQ(zl::l2_cache_bytes(device_with(int_value(62914560))), 62914560);
  EXPECT_FALSE(zl::l2_cache_bytes(device_with(std::nullopt)));
  EXPECT_FALSE(zl::l2_cache_bytes(device_with(int_value(0))));
  zl::NamedValue text;
  text.name = "l2_cache_bytes";
  text.type = ZL_VALUE_STRING;
  text.text = "60 MB";
  EXPECT_FALSE(zl::l2_cache_bytes(device_with(text)));
}

TEST(L2Policy, ColdIsRefusedOnADeviceWithoutAnL2SizeWarmIsNot) {
  EXPECT_NO_THROW(zl::check_l2_device("warm", "fakegpu", device_with(std::nullopt)));
  EXPECT_NO_THROW(zl::check_l2_device("cold", "cuda", device_with(int_value(52428800))));
  try {
    zl::check_l2_device("cold", "fakegpu", device_with(std::nullopt));
    FAIL();
  } catch (const zl::UsageError& e) {
    EXPECT_STREQ(e.what(),
                 "--l2 cold cannot be honoured on fakegpu device 3 (NVIDIA H200): the backend does not report its L2 "
                 "size (device attribute l2_cache_bytes), and cold clears that many bytes before each call; use "
                 "--l2 warm");
  }
  try {
    zl::check_l2_device("cold", "fakegpu", device_with(int_value(-5)));
    FAIL();
  } catch (const zl::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("reports l2_cache_bytes as '-5', not a size in bytes"), std::string::npos)
        << e.what();
  }
}

}  // namespace
