#include "protocol/WorkerProtocol.h"
#include "protocol/WorkerResponse.h"

#include <gtest/gtest.h>

using namespace kforge::core;
using nlohmann::json;

namespace {

TEST(WorkerProtocolTest, RequestIsIdTypeAndPayloadFields)
{
    Result<json> request = makeWorkerRequest(7, "evaluate", json{{"candidate", "k1"}, {"iters", 3}});
    ASSERT_TRUE(request.ok());
    EXPECT_EQ(*request, json({{"id", 7}, {"type", "evaluate"}, {"candidate", "k1"}, {"iters", 3}}));
    EXPECT_EQ(workerRequestPayload(*request), json({{"candidate", "k1"}, {"iters", 3}}));

    Result<WorkerRequest> parsed = parseWorkerRequest(*request);
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(parsed->id, 7);
    EXPECT_EQ(parsed->type, "evaluate");
    EXPECT_EQ(parsed->message, *request);

    Result<json> bare = makeWorkerRequest(1, "hello", nullptr);
    ASSERT_TRUE(bare.ok());
    EXPECT_EQ(*bare, json({{"id", 1}, {"type", "hello"}}));
}

TEST(WorkerProtocolTest, BadRequestsAreRejectedWithOneLine)
{
    EXPECT_FALSE(makeWorkerRequest(1, "", nullptr).ok());
    EXPECT_FALSE(makeWorkerRequest(1, "echo", json::array()).ok());
    EXPECT_FALSE(makeWorkerRequest(1, "echo", json{{"id", 3}}).ok());
    EXPECT_FALSE(makeWorkerRequest(1, "echo", json{{"type", "x"}}).ok());

    // A stack trace in a describe()d stderr tail is left out: the lines around it stay.
    WorkerResponse crashed;
    crashed.outcome = WorkerOutcome::Crashed;
    crashed.requestType = "evaluate";
    crashed.message = "worker killed by SIGABRT";
    crashed.stderrTail = "terminate called after throwing an instance of 'c10::OutOfMemoryError'\n"
                         "  what():  CUDA out of memory. Tried to allocate 2.00 GiB.\n"
                         "Exception raised from malloc at CUDACachingAllocator.cpp:1313 (most recent call first):\n"
                         "frame #0: c10::Error::Error + 0x96 (0x7f in libc10.so)\n"
                         "frame #1: <unknown function> + 0x1fa3 (0x7f in libc10_cuda.so)\n";
    EXPECT_EQ(crashed.describe(2),
              "evaluate: worker killed by SIGABRT (stderr: terminate called after throwing an "
              "instance of 'c10::OutOfMemoryError' |   what():  CUDA out of memory. Tried to "
              "allocate 2.00 GiB.)");

    for (const json& bad : {json::array(), json{{"type", "echo"}}, json{{"id", "1"}, {"type", "echo"}},
                            json{{"id", 1.5}, {"type", "echo"}}, json{{"id", 1}}, json{{"id", 1}, {"type", ""}},
                            json{{"id", 1}, {"type", 3}}}) {
        Result<WorkerRequest> parsed = parseWorkerRequest(bad);
        ASSERT_FALSE(parsed.ok()) << bad.dump();
        EXPECT_EQ(parsed.error().code, ErrorCode::InvalidArgument);
    }
    EXPECT_EQ(workerRequestId(json{{"id", 5}}), std::optional<std::int64_t>(5));
    EXPECT_EQ(workerRequestId(json{{"id", "5"}}), std::nullopt);
    EXPECT_EQ(workerRequestId(json::array()), std::nullopt);
}

TEST(WorkerProtocolTest, RepliesRoundTrip)
{
    const json ok = makeWorkerOkReply(4, json{{"x", 1}});
    EXPECT_EQ(ok, json({{"id", 4}, {"ok", true}, {"result", {{"x", 1}}}}));
    Result<WorkerReply> parsedOk = parseWorkerReply(ok);
    ASSERT_TRUE(parsedOk.ok());
    EXPECT_EQ(parsedOk->id, std::optional<std::int64_t>(4));
    EXPECT_TRUE(parsedOk->ok);
    EXPECT_EQ(parsedOk->result, json({{"x", 1}}));

    const json error = makeWorkerErrorReply(std::nullopt, "unknown-type", "no handler", "worker");
    EXPECT_EQ(error,
              json({{"id", nullptr},
                    {"ok", false},
                    {"error", {{"code", "unknown-type"}, {"message", "no handler"}, {"context", "worker"}}}}));
    Result<WorkerReply> parsedError = parseWorkerReply(error);
    ASSERT_TRUE(parsedError.ok());
    EXPECT_FALSE(parsedError->id.has_value());
    EXPECT_FALSE(parsedError->ok);
    EXPECT_EQ(parsedError->errorCode, "unknown-type");
    EXPECT_EQ(parsedError->errorMessage, "no handler");
    EXPECT_EQ(parsedError->errorContext, "worker");

    for (const json& bad :
         {json{{"ok", true}, {"result", 1}}, json{{"id", 1}, {"result", 1}}, json{{"id", 1}, {"ok", true}},
          json{{"id", 1}, {"ok", false}}, json{{"id", 1}, {"ok", false}, {"error", {{"code", 1}, {"message", "m"}}}},
          json{{"id", "x"}, {"ok", true}, {"result", 1}}, json("reply")})
        EXPECT_FALSE(parseWorkerReply(bad).ok()) << bad.dump();
}

} // namespace
