#include "protocol/Base64.h"

#include <gtest/gtest.h>

#include <random>

using namespace kforge::core;

namespace {

TEST(Base64Test, Rfc4648Vectors)
{
    const std::pair<const char*, const char*> vectors[] = {
        {"", ""},
        {"f", "Zg=="},
        {"fo", "Zm8="},
        {"foo", "Zm9v"},
        {"foob", "Zm9vYg=="},
        {"fooba", "Zm9vYmE="},
        {"foobar", "Zm9vYmFy"},
    };
    for (const auto& [plain, encoded] : vectors) {
        EXPECT_EQ(base64Encode(plain), encoded) << plain;
        Result<std::string> decoded = base64Decode(encoded);
        ASSERT_TRUE(decoded.ok()) << encoded << ": " << decoded.error().toString();
        EXPECT_EQ(*decoded, plain);
    }
}

TEST(Base64Test, AllByteValuesRoundTrip)
{
    std::string bytes;
    for (int i = 0; i < 256; ++i)
        bytes.push_back(static_cast<char>(i));
    EXPECT_EQ(base64Encode(std::string_view("\xff\xfe\x00", 3)), "//4A");
    EXPECT_EQ(base64Encode(std::string_view("\xfb\xef\xbe", 3)), "++++");
    std::mt19937 rng(7);
    for (size_t n = 0; n < 70; ++n) {
        std::string sample(n, '\0');
        for (char& c : sample)
            c = static_cast<char>(rng());
        const std::string text = base64Encode(sample + bytes);
        Result<std::string> back = base64Decode(text);
        ASSERT_TRUE(back.ok()) << back.error().toString();
        EXPECT_EQ(*back, sample + bytes);
    }
}

TEST(Base64Test, RejectsNonCanonicalInput)
{
    for (const char* bad :
         {"Zg=", "Zg", "Z===", "Zg==Zg==", "Zm9v\n", "Zm9 ", "Zm-v", "Zm_v", "=Zm9", "Zh==", "Zm9=", "Zm=v"}) {
        Result<std::string> decoded = base64Decode(bad);
        ASSERT_FALSE(decoded.ok()) << bad;
        EXPECT_EQ(decoded.error().code, ErrorCode::InvalidArgument) << bad;
        EXPECT_EQ(decoded.error().toString().find('\n'), std::string::npos);
    }
    Result<std::string> decoded = base64Decode("Zm9v*mFy");
    ASSERT_FALSE(decoded.ok());
    EXPECT_NE(decoded.error().message.find("offset 4"), std::string::npos) << decoded.error().message;
}

} // namespace
