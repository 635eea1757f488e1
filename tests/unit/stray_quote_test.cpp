// A quote that never closes (records/stray_quote.cpp): stray when a whole
// record of the file follows it, a torn last record when none does.
#include <gtest/gtest.h>

#include "zlcore/stray_quote.hpp"

namespace {

using zl::records::after_stray_quote;

// A record of a two-column file whose first field is "ok".
bool ok_record(const std::vector<std::string>& f) { return f.size() == 2 && f[0] == "ok"; }

TEST(StrayQuote, AWholeRecordAfterItMakesTheQuoteStrayAndCostsOnlyItsLine) {
  const std::string head = "ok,1\n";
  const std::string text = head + "ok,\"stray\nok,2\nok,3\n";
  const auto next = after_stray_quote(text, head.size(), ok_record);
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(text.substr(*next), "ok,2\nok,3\n");
}

TEST(StrayQuote, OnTheLastLineItIsATornRecord) {
  EXPECT_FALSE(after_stray_quote("ok,1\nok,\"torn", 5, ok_record).has_value());
  EXPECT_FALSE(after_stray_quote("ok,\"torn\n", 0, ok_record).has_value());
}

TEST(StrayQuote, LinesThatAreNoRecordOfTheFileDoNotMakeItStray) {
  // What follows reads as CSV but not as a record of the file: a record torn
  // mid-field whose tail is text, not lines that a stray quote swallowed.
  EXPECT_FALSE(after_stray_quote("ok,\"torn\nbogus\nno,1\n", 0, ok_record).has_value());
}

TEST(StrayQuote, ARecordFoundPastOtherDamageStillCounts) {
  const std::string text = "ok,\"a\nbogus\nok,\"b\nok,2\n";
  const auto next = after_stray_quote(text, 0, ok_record);
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(*next, 6u);
}

}  // namespace
