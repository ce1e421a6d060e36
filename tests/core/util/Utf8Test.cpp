#include "util/Utf8Text.h"

#include <gtest/gtest.h>

#include <string>

using kforge::core::firstInvalidUtf8;

TEST(Utf8Test, WellFormedTextHasNoInvalidByte)
{
    EXPECT_EQ(firstInvalidUtf8(""), std::nullopt);
    EXPECT_EQ(firstInvalidUtf8("__global__ void k() {}\n"), std::nullopt);
    EXPECT_EQ(firstInvalidUtf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
              std::nullopt); // é € 😀
    EXPECT_EQ(firstInvalidUtf8("\xef\xbf\xbf\xf4\x8f\xbf\xbf"),
              std::nullopt); // U+FFFF, U+10FFFF
}

TEST(Utf8Test, NamesTheOffsetOfTheFirstIllFormedSequence)
{
    EXPECT_EQ(firstInvalidUtf8("caf\xe9"), 3u);            // Latin-1 é
    EXPECT_EQ(firstInvalidUtf8("ab\x80"), 2u);             // a lone continuation byte
    EXPECT_EQ(firstInvalidUtf8("\xc0\xaf"), 0u);           // overlong '/'
    EXPECT_EQ(firstInvalidUtf8("x\xe0\x80\xaf"), 1u);      // overlong three-byte form
    EXPECT_EQ(firstInvalidUtf8("\xed\xa0\x80"), 0u);       // a UTF-16 surrogate
    EXPECT_EQ(firstInvalidUtf8("ok\xf4\x90\x80\x80"), 2u); // above U+10FFFF
    EXPECT_EQ(firstInvalidUtf8("ok\xe2\x82"), 2u);         // cut short at the end
    EXPECT_EQ(firstInvalidUtf8("\xe2(\xa1"), 0u);          // a bad continuation
    EXPECT_EQ(firstInvalidUtf8(std::string("a\0b\xff", 4)),
              3u); // NUL is valid UTF-8; 0xff never is
}
