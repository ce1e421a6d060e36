// The compile request/reply of kforge-nvrtc: byte-exact round trips (sources and logs that are not
// UTF-8), refusal of malformed messages, and the log bound of the NVRTC side.

#include "KernelTestSupport.h"

#include "nvrtc_run/NvrtcMessages.h"
#include "nvrtc_run/NvrtcRun.h"

#include <gtest/gtest.h>

namespace kforge::core {
namespace {

using nlohmann::json;

TEST(NvrtcMessages, RequestRoundTripKeepsEveryByte)
{
    NvrtcCompileRequest request;
    request.source = std::string("// caf\xe9 \xff\x00 tail\n", 18) + test::addKernel();
    request.sourceName = "n\xe4me.cu";
    request.options = {"--gpu-architecture=sm_90", "--include-path=/tmp/\xfe"};
    request.timeout = std::chrono::milliseconds(1234);
    const json message = toJson(request);
    EXPECT_NO_THROW((void)message.dump()); // valid UTF-8 JSON whatever the bytes
    Result<NvrtcCompileRequest> back = nvrtcCompileRequestFromJson(message);
    ASSERT_TRUE(back) << back.error().toString();
    EXPECT_EQ(back->source, request.source);
    EXPECT_EQ(back->sourceName, request.sourceName);
    EXPECT_EQ(back->options, request.options);
    EXPECT_EQ(back->timeout, request.timeout);
}

TEST(NvrtcMessages, ReplyRoundTripKeepsEveryByte)
{
    NvrtcCompileReply reply;
    reply.status = NvrtcStatus::CompileError;
    reply.log = "x.cu(1): error: \xff\xfe\n";
    reply.ptx = ".version 9.0\n";
    reply.cubin = {0x7f, 'E', 'L', 'F', 0, 1, 2};
    reply.compileMs = 12.5;
    Result<NvrtcCompileReply> back = nvrtcCompileReplyFromJson(json::parse(toJson(reply).dump()));
    ASSERT_TRUE(back) << back.error().toString();
    EXPECT_EQ(back->status, reply.status);
    EXPECT_EQ(back->log, reply.log);
    EXPECT_EQ(back->ptx, reply.ptx);
    EXPECT_EQ(back->cubin, reply.cubin);
    EXPECT_EQ(back->compileMs, 12.5);
}

TEST(NvrtcMessages, MalformedMessagesAreRefused)
{
    json good = toJson(NvrtcCompileRequest{"s", "n.cu", {"-a"}, std::chrono::milliseconds(1)});
    for (const char* field : {"source_base64", "source_name_base64", "options_base64", "timeout_ms"}) {
        json bad = good;
        bad.erase(field);
        EXPECT_FALSE(nvrtcCompileRequestFromJson(bad)) << field;
    }
    json notBase64 = good;
    notBase64["source_base64"] = "not base64!";
    EXPECT_FALSE(nvrtcCompileRequestFromJson(notBase64));
    json negative = good;
    negative["timeout_ms"] = -5;
    EXPECT_FALSE(nvrtcCompileRequestFromJson(negative));

    json reply = toJson(NvrtcCompileReply{});
    EXPECT_TRUE(nvrtcCompileReplyFromJson(reply));
    reply["status"] = "not-finished"; // only the parent sets it
    EXPECT_FALSE(nvrtcCompileReplyFromJson(reply));
    reply["status"] = "compiled";
    reply["compile_ms"] = "fast";
    EXPECT_FALSE(nvrtcCompileReplyFromJson(reply));
}

TEST(NvrtcRun, AHugeLogIsCutAtALineEndAndSaysSo)
{
    // Each line draws one warning of about 100 bytes: several MiB of log.
    std::string source;
    for (int i = 0; i < 40000; ++i)
        source += "#warning kforge test warning number " + std::to_string(i) + "\n";
    source += test::addKernel();
    NvrtcCompileReply reply = runNvrtc(NvrtcCompileRequest{source, "warnings.cu", {"--gpu-architecture=sm_90"}, {}});
    ASSERT_EQ(reply.status, NvrtcStatus::Compiled) << reply.failure;
    EXPECT_LE(reply.log.size(), kMaxNvrtcLogBytes + 200);
    EXPECT_NE(reply.log.find("[kforge: NVRTC log truncated: "), std::string::npos);
    EXPECT_EQ(reply.log.back(), '\n');
    EXPECT_FALSE(reply.cubin.empty());
}

TEST(NvrtcRun, RejectedOptionIsInvalidOptionWithNvrtcsReason)
{
    NvrtcCompileReply reply = runNvrtc(NvrtcCompileRequest{test::addKernel(), "a.cu", {"-O3"}, {}});
    EXPECT_EQ(reply.status, NvrtcStatus::InvalidOption);
    EXPECT_NE(reply.failure.find("-O3"), std::string::npos) << reply.failure;
}

} // namespace
} // namespace kforge::core
