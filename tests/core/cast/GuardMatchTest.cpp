// Guard matching: a hit, and each kind of mismatch reported with its reason.

#include "cast/GuardMatch.h"

#include <gtest/gtest.h>

namespace kforge::core {
namespace {

KernelGuard guard()
{
    KernelGuard g;
    g.tensors = {{"self", "float16", {8, 512}, {512, 1}, 16}, {"other", "float16", {8, 512}, {512, 1}, 4}};
    g.capabilityMajor = 9;
    g.capabilityMinor = 0;
    return g;
}

CallSpec hit()
{
    CallSpec call;
    call.tensors = {{"float16", {8, 512}, {512, 1}, 0x7f0000001000}, {"float16", {8, 512}, {512, 1}, 0x7f0000002004}};
    call.capabilityMajor = 9;
    call.capabilityMinor = 0;
    return call;
}

TEST(GuardMatch, ExactCallMatches)
{
    const auto result = matchGuard(guard(), hit());
    EXPECT_TRUE(result.matched());
    EXPECT_EQ(result.mismatch, GuardMismatch::None);
    EXPECT_TRUE(result.reason.empty());
}

TEST(GuardMatch, EachMismatchIsReported)
{
    CallSpec call = hit();
    call.tensors[1].dtype = "float32";
    auto r = matchGuard(guard(), call);
    EXPECT_EQ(r.mismatch, GuardMismatch::Dtype);
    EXPECT_EQ(r.reason, "other: dtype float32 != guard float16");

    call = hit();
    call.tensors[0].sizes = {16, 512};
    call.tensors[0].strides = {512, 1};
    r = matchGuard(guard(), call);
    EXPECT_EQ(r.mismatch, GuardMismatch::Sizes);
    EXPECT_EQ(r.reason, "self: sizes [16,512] != guard [8,512]");

    call = hit();
    call.tensors[0].strides = {1, 8}; // same sizes, transposed layout
    r = matchGuard(guard(), call);
    EXPECT_EQ(r.mismatch, GuardMismatch::Strides);
    EXPECT_EQ(r.reason, "self: strides [1,8] != guard [512,1]");

    call = hit();
    call.capabilityMinor = 1;
    r = matchGuard(guard(), call);
    EXPECT_EQ(r.mismatch, GuardMismatch::Capability);
    EXPECT_EQ(r.reason, "device capability 9.1 != guard 9.0");
    call.capabilityMajor = 8;
    call.capabilityMinor = 0;
    EXPECT_EQ(matchGuard(guard(), call).mismatch, GuardMismatch::Capability);

    call = hit();
    call.tensors[0].dataPtr += 8; // 16-byte loads need 16-byte alignment
    r = matchGuard(guard(), call);
    EXPECT_EQ(r.mismatch, GuardMismatch::Alignment);
    EXPECT_EQ(r.reason, "self: data pointer is 8 bytes off the required 16-byte alignment");
    call = hit();
    call.tensors[1].dataPtr += 4; // 4-byte alignment still holds for "other"
    EXPECT_TRUE(matchGuard(guard(), call).matched());
    call.tensors[1].dataPtr += 2;
    EXPECT_EQ(matchGuard(guard(), call).mismatch, GuardMismatch::Alignment);

    call = hit();
    call.tensors.pop_back();
    EXPECT_EQ(matchGuard(guard(), call).mismatch, GuardMismatch::TensorCount);
}

TEST(GuardMatch, FirstMismatchWins)
{
    CallSpec call = hit();
    call.tensors[0].dtype = "bfloat16";
    call.tensors[0].sizes = {1};
    call.tensors[0].dataPtr = 3;
    EXPECT_EQ(matchGuard(guard(), call).mismatch, GuardMismatch::Dtype);
    EXPECT_STREQ(guardMismatchName(GuardMismatch::Alignment), "alignment");
}

} // namespace
} // namespace kforge::core
