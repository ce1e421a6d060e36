// The server loop in-process: requests go through real pipes to WorkerServer::run() on a thread.

#include "../C10ErrorText.h"

#include "protocol/MessageChannel.h"
#include "protocol/WorkerProtocol.h"
#include "protocol/WorkerServer.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <stdexcept>
#include <thread>
#include <unistd.h>

using namespace kforge::core;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

class WorkerServerTest : public ::testing::Test {
protected:
    void SetUp() override
    {
        int toServer[2], fromServer[2];
        ASSERT_EQ(::pipe2(toServer, O_CLOEXEC), 0);
        ASSERT_EQ(::pipe2(fromServer, O_CLOEXEC), 0);
        m_serverIn = toServer[0];
        m_clientOut = toServer[1];
        m_clientIn = fromServer[0];
        m_serverOut = fromServer[1];
        m_server = std::make_unique<WorkerServer>(m_serverIn, m_serverOut, 1u << 20);
        m_server->registerHandler("echo", [](const json& r) -> Result<json> { return workerRequestPayload(r); });
        m_server->registerHandler("fail", [](const json&) -> Result<json> {
            return makeError(ErrorCode::BadInputs, "shape mismatch", "card 3");
        });
        m_server->registerHandler("throw", [](const json&) -> Result<json> { throw std::runtime_error("boom"); });
        m_server->registerHandler("throwInt", [](const json&) -> Result<json> { throw 42; });
        m_server->registerHandler("huge", [](const json&) -> Result<json> { return json(std::string(2u << 20, 'h')); });
        m_client = std::make_unique<MessageChannel>(m_clientIn, m_clientOut);
    }
    void TearDown() override
    {
        closeClientOut();
        if (m_thread.joinable())
            m_thread.join();
        for (int fd : {m_serverIn, m_serverOut, m_clientIn})
            ::close(fd);
    }
    void runServer()
    {
        m_thread = std::thread([this] { m_exitCode = m_server->run(); });
    }
    void closeClientOut()
    {
        if (m_clientOut >= 0)
            ::close(m_clientOut);
        m_clientOut = -1;
    }
    json call(const json& request)
    {
        EXPECT_TRUE(m_client->write(request).ok());
        MessageChannel::ReadResult r = m_client->read(MessageChannel::Clock::now() + 5s);
        EXPECT_EQ(r.status, MessageChannel::ReadStatus::Message) << r.error;
        return r.message;
    }
    int joinServer()
    {
        m_thread.join();
        return m_exitCode;
    }

    int m_serverIn = -1, m_serverOut = -1, m_clientIn = -1, m_clientOut = -1;
    std::unique_ptr<WorkerServer> m_server;
    std::unique_ptr<MessageChannel> m_client;
    std::thread m_thread;
    int m_exitCode = -1;
};

TEST_F(WorkerServerTest, HelloWithoutHandlerGivesVersionAndPid)
{
    runServer();
    const json reply = call({{"id", 1}, {"type", "hello"}});
    EXPECT_EQ(
        reply,
        json({{"id", 1},
              {"ok", true},
              {"result", {{"protocolVersion", kWorkerProtocolVersion}, {"pid", ::getpid()}, {"info", nullptr}}}}));
}

TEST_F(WorkerServerTest, HelloHandlerResultBecomesInfo)
{
    m_server->registerHandler("hello", [](const json&) -> Result<json> { return json{{"gpu", "none"}}; });
    runServer();
    const json reply = call({{"id", 2}, {"type", "hello"}});
    EXPECT_EQ(reply["result"]["info"], json({{"gpu", "none"}}));
    EXPECT_EQ(reply["result"]["protocolVersion"], kWorkerProtocolVersion);
}

TEST_F(WorkerServerTest, HandlerResultsErrorsAndExceptionsEachGetOneReplyAndTheLoopGoesOn)
{
    runServer();
    EXPECT_EQ(call({{"id", 1}, {"type", "echo"}, {"x", "\u00fc"}}),
              json({{"id", 1}, {"ok", true}, {"result", {{"x", "\u00fc"}}}}));
    EXPECT_EQ(call({{"id", 2}, {"type", "fail"}}),
              json({{"id", 2},
                    {"ok", false},
                    {"error", {{"code", "bad-inputs"}, {"message", "shape mismatch"}, {"context", "card 3"}}}}));
    json reply = call({{"id", 3}, {"type", "throw"}});
    EXPECT_EQ(reply["error"]["code"], "handler-exception");
    EXPECT_EQ(reply["error"]["message"], "handler of 'throw' threw: boom");
    reply = call({{"id", 4}, {"type", "throwInt"}});
    EXPECT_EQ(reply["error"]["code"], "handler-exception");
    reply = call({{"id", 5}, {"type", "nope"}});
    EXPECT_EQ(reply,
              json({{"id", 5},
                    {"ok", false},
                    {"error", {{"code", "unknown-type"}, {"message", "no handler for request type 'nope'"}}}}));
    reply = call({{"id", 6}, {"type", "huge"}});
    EXPECT_EQ(reply["ok"], false);
    EXPECT_EQ(reply["error"]["code"], "bad-reply");
    EXPECT_EQ(call({{"id", 7}, {"type", "echo"}})["ok"], true);
    closeClientOut();
    EXPECT_EQ(joinServer(), WorkerServer::kExitOk) << "end of stream is a normal exit";
}

TEST_F(WorkerServerTest, AnExceptionsBacktraceNeverLeavesTheWorker)
{
    // c10::Error::what() as LibTorch writes it: message, then the trace.
    m_server->registerHandler("oom", [](const json&) -> Result<json> {
        throw std::runtime_error(test::c10ErrorText(test::kC10OutOfMemory, 30));
    });
    m_server->registerHandler("twoLines", [](const json&) -> Result<json> {
        return makeError(ErrorCode::Internal, "eager reference failed\nsecond line of the story", "card 3");
    });
    runServer();
    json reply = call({{"id", 1}, {"type", "oom"}});
    EXPECT_EQ(reply["error"]["message"],
              "handler of 'oom' threw: CUDA out of memory. Tried to allocate 256.00 MiB. "
              "GPU 0 has a total capacity of 139.81 GiB of which 12.44 MiB is free.");
    EXPECT_FALSE(reply["error"].contains("detail")); // the rest was only the trace
    EXPECT_EQ(reply.dump().find("frame #"), std::string::npos);
    reply = call({{"id", 2}, {"type", "twoLines"}});
    EXPECT_EQ(reply["error"]["message"], "eager reference failed");
    EXPECT_EQ(reply["error"]["detail"], "eager reference failed\nsecond line of the story");
    Result<WorkerReply> parsed = parseWorkerReply(reply);
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(parsed->errorDetail, "eager reference failed\nsecond line of the story");
}

TEST_F(WorkerServerTest, MalformedRequestsGetBadRequestReplies)
{
    runServer();
    json reply = call({{"id", 9}, {"kind", "echo"}});
    EXPECT_EQ(reply["id"], 9);
    EXPECT_EQ(reply["error"]["code"], "bad-request");
    reply = call(json::array({1, 2}));
    EXPECT_EQ(reply["id"], nullptr);
    EXPECT_EQ(reply["error"]["code"], "bad-request");

    const std::string garbage = std::string("\x05\x00\x00\x00", 4) + "{oops";
    ASSERT_EQ(::write(m_clientOut, garbage.data(), garbage.size()), ssize_t(garbage.size()));
    MessageChannel::ReadResult r = m_client->read(MessageChannel::Clock::now() + 5s);
    ASSERT_EQ(r.status, MessageChannel::ReadStatus::Message);
    EXPECT_EQ(r.message["id"], nullptr);
    EXPECT_EQ(r.message["error"]["code"], "bad-request");
    EXPECT_EQ(call({{"id", 10}, {"type", "echo"}})["ok"], true) << "the server survived the garbage";
}

TEST_F(WorkerServerTest, ShutdownRepliesThenReturnsZero)
{
    bool cleanedUp = false;
    m_server->registerHandler("shutdown", [&](const json&) -> Result<json> {
        cleanedUp = true;
        return json{{"bye", true}};
    });
    runServer();
    EXPECT_EQ(call({{"id", 1}, {"type", "shutdown"}}), json({{"id", 1}, {"ok", true}, {"result", {{"bye", true}}}}));
    EXPECT_EQ(joinServer(), WorkerServer::kExitOk);
    EXPECT_TRUE(cleanedUp);
}

TEST_F(WorkerServerTest, LostFramingEndsTheLoopWithAProtocolErrorCode)
{
    runServer();
    const std::string badLength("\xff\xff\xff\x7f", 4);
    ASSERT_EQ(::write(m_clientOut, badLength.data(), badLength.size()), 4);
    EXPECT_EQ(joinServer(), WorkerServer::kExitProtocolError);
}

} // namespace
