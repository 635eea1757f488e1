// util/printable: what reaches a terminal has no control character left,
// and everything else (UTF-8 included) is unchanged.
#include <gtest/gtest.h>

#include "util/printable.hpp"

TEST(Printable, EscapesControlCharactersAndKeepsText) {
  EXPECT_EQ(zl::printable("abs"), "abs");
  EXPECT_EQ(zl::printable("a\x1b[31mb"), "a\\x1b[31mb");
  EXPECT_EQ(zl::printable("\x1b]0;title\x07"), "\\x1b]0;title\\x07");
  EXPECT_EQ(zl::printable("one\ntwo\tthree\r"), "one\\ntwo\\tthree\\x0d");
  EXPECT_EQ(zl::printable(std::string("nul\0x", 5)), "nul\\x00x");
  EXPECT_EQ(zl::printable("\x7f"), "\\x7f");
}

TEST(Printable, KeepsUtf8AndEscapesWhatIsNot) {
  EXPECT_EQ(zl::printable("caf\xc3\xa9 \xe2\x9c\x93"), "caf\xc3\xa9 \xe2\x9c\x93");
  // C1 controls (CSI is U+009B) act like ESC sequences on some terminals.
  EXPECT_EQ(zl::printable("\xc2\x9b"
                          "31m"),
            "\\u009b31m");
  EXPECT_EQ(zl::printable("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(zl::printable("\xe2\x9c"), "\\xe2\\x9c");  // cut short
}

// What passes unescaped must be UTF-8 every strict reader (a JSON parser,
// Python) accepts: overlong forms, surrogates and code points past U+10FFFF
// are bytes to escape.
TEST(Printable, EscapesOverlongFormsSurrogatesAndOutOfRangeCodePoints) {
  EXPECT_EQ(zl::printable("\xe0\x80\xaf"), "\\xe0\\x80\\xaf");                                 // overlong '/'
  EXPECT_EQ(zl::printable("\xf0\x80\x80\xaf"), "\\xf0\\x80\\x80\\xaf");                        // overlong, 4 bytes
  EXPECT_EQ(zl::printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");                                 // U+D800
  EXPECT_EQ(zl::printable("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");                        // U+110000
  EXPECT_EQ(zl::printable("\xed\x9f\xbf \xf4\x8f\xbf\xbf"), "\xed\x9f\xbf \xf4\x8f\xbf\xbf");  // the last valid ones
}

TEST(Printable, LinesKeepTheirEnds) {
  EXPECT_EQ(zl::printable_lines("a\x1b\nb\n"), "a\\x1b\nb\n");
  EXPECT_EQ(zl::printable_lines("no end"), "no end");
}
