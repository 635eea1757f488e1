// The SDK's backend kit: what it builds must read back through the core's
// own reader, and nothing a backend throws may cross the ABI.
#include <gtest/gtest.h>
#include <zl/backend_kit.hpp>

#include <stdexcept>

#include "zlcore/bool_text.hpp"
#include "zlcore/named_value.hpp"

namespace {

TEST(BackendKit, BooleanWordsAreZlcoresOwnSpellingInAnyCase) {
  for (const char* yes : {"1", "true", "YES", "On"}) EXPECT_EQ(zl_kit_bool_word(yes), 1) << yes;
  for (const char* no : {"0", "False", "no", "OFF"}) EXPECT_EQ(zl_kit_bool_word(no), 0) << no;
  for (const char* neither : {"", "2", "yess", "enabled", "truetruetrue"}) {
    EXPECT_EQ(zl_kit_bool_word(neither), -1) << neither;
    EXPECT_FALSE(zl::parse_bool(neither).has_value()) << neither;  // the core reads the same words
  }
  EXPECT_EQ(zl_kit_bool_word(nullptr), -1);
  EXPECT_EQ(zl::parse_bool("Yes"), std::optional<bool>(true));
}

TEST(BackendKit, ListIsOneBlockWithTypedAttributesAndKeepsANullPin) {
  zl_kit::Device d;
  d.index = 3;
  d.id = "X-3";
  d.name = "Kit Device";
  d.attributes = {zl_kit::Value::str("architecture", "kitarch"), zl_kit::Value::f64("memory_bandwidth_peak_gbps", 2.5),
                  zl_kit::Value::flag("ecc_enabled", true), zl_kit::Value::i64("compute_units", 7)};
  zl_device_list* list = nullptr;
  ASSERT_EQ(zl_kit::make_device_list({d, d}, "kit", "unused", &list), nullptr);
  ASSERT_NE(list, nullptr);
  EXPECT_EQ(list->count, 2u);
  EXPECT_EQ(list->reason, nullptr);  // a reason only when there are no devices
  EXPECT_STREQ(list->source, "kit");
  const zl_device_info& second = list->devices[1];
  EXPECT_EQ(second.struct_size, ZL_DEVICE_INFO_STRUCT_SIZE);
  EXPECT_EQ(second.visibility_value, nullptr);  // no visibility variable stays NULL, not ""
  EXPECT_EQ(reinterpret_cast<uintptr_t>(second.attributes) % alignof(zl_named_value), 0u);
  zl::NamedValues v = zl::read_named_values(second.attributes, second.attribute_count);
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(v[0].display(), "kitarch");
  EXPECT_EQ(v[1].display(), "2.5");
  EXPECT_EQ(v[2].display(), "true");
  EXPECT_EQ(v[3].display(), "7");
  zl_kit_device_list_free(list);
}

TEST(BackendKit, EmptyListCarriesTheReasonAndParseFailuresAreErrors) {
  zl_device_list* list = nullptr;
  zl_kit::Enumeration e;
  e.reason = "no driver\nat all";
  ASSERT_EQ(zl_kit::deliver(e, &list), nullptr);
  EXPECT_STREQ(list->reason, "no driver; at all");
  zl_kit_device_list_free(list);
  e.parse_failed = true;
  list = nullptr;
  zl_error* err = zl_kit::deliver(e, &list);
  ASSERT_NE(err, nullptr);
  EXPECT_EQ(err->code, ZL_ERROR_PARSE);
  EXPECT_EQ(list, nullptr);
  zl_kit_error_free(err);
}

TEST(BackendKit, TheBarrierTurnsAThrowIntoAnError) {
  zl_error* err = zl_kit::barrier("enumerate", []() -> zl_error* { throw std::runtime_error("boom"); });
  ASSERT_NE(err, nullptr);
  EXPECT_EQ(err->code, ZL_ERROR_INTERNAL);
  EXPECT_STREQ(err->message, "enumerate failed: boom");
  zl_kit_error_free(err);
  err = zl_kit::barrier("shutdown", []() -> zl_error* { throw 42; });
  ASSERT_NE(err, nullptr);
  EXPECT_STREQ(err->message, "shutdown failed");
  zl_kit_error_free(err);
}

TEST(BackendKit, FindExtensionSkipsUnknownTypesAndStopsOnACycle) {
  zl_extension_base c{ZL_EXTENSION_BASE_STRUCT_SIZE, 0x10003u, nullptr};
  zl_extension_base b{ZL_EXTENSION_BASE_STRUCT_SIZE, 0x10002u, &c};
  zl_extension_base a{ZL_EXTENSION_BASE_STRUCT_SIZE, 0x10001u, &b};
  EXPECT_EQ(zl_kit_find_extension(&a, 0x10003u), &c);
  EXPECT_EQ(zl_kit_find_extension(&a, 0x10009u), nullptr);
  c.next = &a;  // a cycle must not hang a backend
  EXPECT_EQ(zl_kit_find_extension(&a, 0x10009u), nullptr);
}

TEST(BackendKit, StateBuilderAndFormattedErrors) {
  zl_kit::State s;
  s.values = {zl_kit::Value::i64("clock_sm_mhz", 1980), zl_kit::Value::str("throttle_reasons", "none")};
  zl_device_state* st = nullptr;
  ASSERT_EQ(zl_kit::deliver(s, &st), nullptr);
  zl::NamedValues v = zl::read_named_values(st->values, st->value_count);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[1].text, "none");
  zl_kit_device_state_free(st);
  zl_error* err = zl_kit_error(ZL_ERROR_INVALID_ARGUMENT, "no device %d", 5);
  EXPECT_STREQ(err->message, "no device 5");
  zl_kit_error_free(err);
}

}  // namespace
