#include "protocol/MessageChannel.h"

#include <gtest/gtest.h>

#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <thread>
#include <unistd.h>

using namespace kforge::core;
using nlohmann::json;
using Status = MessageChannel::ReadStatus;
using namespace std::chrono_literals;

namespace {

// One pipe; both ends closed on destruction unless closed earlier.
struct Pipe {
    int readFd = -1;
    int writeFd = -1;
    Pipe()
    {
        int fds[2];
        EXPECT_EQ(::pipe2(fds, O_CLOEXEC), 0);
        readFd = fds[0];
        writeFd = fds[1];
    }
    ~Pipe()
    {
        closeRead();
        closeWrite();
    }
    void closeRead()
    {
        if (readFd >= 0)
            ::close(readFd);
        readFd = -1;
    }
    void closeWrite()
    {
        if (writeFd >= 0)
            ::close(writeFd);
        writeFd = -1;
    }
};

std::string frame(const std::string& body, std::uint32_t length)
{
    std::string out(4, '\0');
    for (int i = 0; i < 4; ++i)
        out[i] = static_cast<char>((length >> (8 * i)) & 0xff);
    return out + body;
}

std::string frame(const std::string& body)
{
    return frame(body, static_cast<std::uint32_t>(body.size()));
}

void writeAll(int fd, const std::string& bytes)
{
    size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        ASSERT_GT(n, 0) << std::strerror(errno);
        done += size_t(n);
    }
}

bool readable(int fd)
{
    pollfd pfd{fd, POLLIN, 0};
    return ::poll(&pfd, 1, 0) == 1;
}

MessageChannel::Deadline in(std::chrono::milliseconds ms)
{
    return MessageChannel::Clock::now() + ms;
}

TEST(MessageChannelTest, FrameIsLittleEndianLengthThenJson)
{
    Pipe pipe;
    MessageChannel out(-1, pipe.writeFd);
    ASSERT_TRUE(out.write(json{{"a", 1}}).ok());
    char bytes[64];
    const ssize_t n = ::read(pipe.readFd, bytes, sizeof bytes);
    ASSERT_EQ(n, 4 + 7);
    EXPECT_EQ(std::string(bytes, size_t(n)), frame("{\"a\":1}"));
}

TEST(MessageChannelTest, LargeMessagesCrossAPipeInPartialWritesAndReads)
{
    Pipe pipe; // 64 KiB of pipe buffer: 8 MiB needs many partial writes and reads
    std::string big(8u << 20, '\0');
    for (size_t i = 0; i < big.size(); ++i)
        big[i] = static_cast<char>('A' + i % 23);
    const json first{{"id", 1}, {"data", big}, {"text", "h\u00e9llo \u2713 \U0001F680"}};
    const json second{{"id", 2}};
    MessageChannel::WriteResult written[2];
    std::thread writer([&] {
        MessageChannel out(-1, pipe.writeFd);
        written[0] = out.write(first);
        written[1] = out.write(second);
    });
    MessageChannel in(pipe.readFd, -1);
    MessageChannel::ReadResult a = in.read(::in(10s));
    MessageChannel::ReadResult b = in.read(::in(10s));
    writer.join();
    EXPECT_TRUE(written[0].ok()) << written[0].error;
    EXPECT_TRUE(written[1].ok()) << written[1].error;
    ASSERT_EQ(a.status, Status::Message) << a.error;
    EXPECT_EQ(a.message, first);
    ASSERT_EQ(b.status, Status::Message) << b.error;
    EXPECT_EQ(b.message, second);
}

TEST(MessageChannelTest, ByteByByteWritesAndSeveralMessagesInOneWrite)
{
    Pipe pipe;
    const std::string bytes = frame("{\"n\":1}") + frame("[2]") + frame("\"three\"");
    std::thread writer([&] {
        // The first message dribbles in one byte at a time; the rest arrive in one write.
        const size_t firstFrame = 4 + 7;
        for (size_t i = 0; i < firstFrame; ++i) {
            writeAll(pipe.writeFd, bytes.substr(i, 1));
            std::this_thread::sleep_for(1ms);
        }
        writeAll(pipe.writeFd, bytes.substr(firstFrame));
        pipe.closeWrite();
    });
    MessageChannel in(pipe.readFd, -1);
    std::vector<json> got;
    for (;;) {
        MessageChannel::ReadResult r = in.read(::in(5s));
        if (r.status != Status::Message) {
            EXPECT_EQ(r.status, Status::EndOfStream) << r.error;
            break;
        }
        got.push_back(r.message);
    }
    writer.join();
    ASSERT_EQ(got.size(), 3u);
    EXPECT_EQ(got[0], json({{"n", 1}}));
    EXPECT_EQ(got[1], json::array({2}));
    EXPECT_EQ(got[2], json("three"));
}

TEST(MessageChannelTest, MessageOverTheLimitIsRefusedByWriterAndReader)
{
    Pipe pipe;
    MessageChannel out(-1, pipe.writeFd, 1024);
    MessageChannel::WriteResult w = out.write(json{{"data", std::string(2000, 'x')}});
    EXPECT_EQ(w.status, MessageChannel::WriteStatus::Refused);
    EXPECT_NE(w.error.find("exceeds the limit of 1024 bytes"), std::string::npos) << w.error;
    EXPECT_FALSE(readable(pipe.readFd)) << "a refused message must not write a single byte";
    EXPECT_TRUE(out.write(json{{"small", true}}).ok()) << "a refusal does not break the channel";

    MessageChannel in(pipe.readFd, -1, 1024);
    ASSERT_EQ(in.read(::in(1s)).status, Status::Message);
    writeAll(pipe.writeFd, frame(std::string(1025, ' ')));
    MessageChannel::ReadResult r = in.read(::in(1s));
    EXPECT_EQ(r.status, Status::ProtocolError);
    EXPECT_NE(r.error.find("message length 1025 exceeds the limit of 1024 bytes"), std::string::npos) << r.error;
    EXPECT_TRUE(in.broken());
    EXPECT_EQ(in.read(::in(1s)).status, Status::ProtocolError) << "framing is lost for good";
}

TEST(MessageChannelTest, GarbageLengthWithTheDefaultLimitIsAProtocolErrorWithoutAllocating)
{
    Pipe pipe;
    writeAll(pipe.writeFd, "\xff\xff\xff\xff{}");
    MessageChannel in(pipe.readFd, -1);
    MessageChannel::ReadResult r = in.read(::in(1s));
    EXPECT_EQ(r.status, Status::ProtocolError);
    EXPECT_NE(r.error.find("4294967295"), std::string::npos) << r.error;
    EXPECT_TRUE(in.broken());

    Pipe pipe2;
    writeAll(pipe2.writeFd, frame("", MessageChannel::kDefaultMaxMessageBytes + 1));
    MessageChannel in2(pipe2.readFd, -1);
    EXPECT_EQ(in2.read(::in(1s)).status, Status::ProtocolError);
}

TEST(MessageChannelTest, BadJsonIsAProtocolErrorThatKeepsTheFraming)
{
    Pipe pipe;
    writeAll(pipe.writeFd, frame("{not json") + frame("") + frame("\"\xc3\x28\"") + frame("{\"ok\":true}"));
    MessageChannel in(pipe.readFd, -1);
    for (const char* what : {"bad syntax", "empty body", "invalid UTF-8"}) {
        MessageChannel::ReadResult r = in.read(::in(1s));
        EXPECT_EQ(r.status, Status::ProtocolError) << what;
        EXPECT_NE(r.error.find("not valid UTF-8 JSON"), std::string::npos) << r.error;
        EXPECT_FALSE(in.broken()) << what;
    }
    MessageChannel::ReadResult r = in.read(::in(1s));
    ASSERT_EQ(r.status, Status::Message) << r.error;
    EXPECT_EQ(r.message, json({{"ok", true}}));
}

TEST(MessageChannelTest, WriterRefusesInvalidUtf8)
{
    Pipe pipe;
    MessageChannel out(-1, pipe.writeFd);
    MessageChannel::WriteResult w = out.write(json{{"s", std::string("\xff\xfe")}});
    EXPECT_EQ(w.status, MessageChannel::WriteStatus::Refused);
    EXPECT_NE(w.error.find("cannot be serialized"), std::string::npos) << w.error;
    EXPECT_FALSE(readable(pipe.readFd));
}

TEST(MessageChannelTest, TimeoutIsDistinctFromEndOfStreamAndAPartialMessageSurvivesATimeout)
{
    Pipe pipe;
    MessageChannel in(pipe.readFd, -1);
    const auto before = std::chrono::steady_clock::now();
    MessageChannel::ReadResult r = in.read(::in(100ms));
    const auto waited = std::chrono::steady_clock::now() - before;
    EXPECT_EQ(r.status, Status::Timeout);
    EXPECT_GE(waited, 100ms);
    EXPECT_LT(waited, 2s);

    // Half a message, a timeout, then the rest: the message arrives whole.
    const std::string bytes = frame("{\"half\":\"done\"}");
    writeAll(pipe.writeFd, bytes.substr(0, 7));
    EXPECT_EQ(in.read(::in(50ms)).status, Status::Timeout);
    writeAll(pipe.writeFd, bytes.substr(7));
    r = in.read(::in(1s));
    ASSERT_EQ(r.status, Status::Message) << r.error;
    EXPECT_EQ(r.message, json({{"half", "done"}}));

    pipe.closeWrite();
    r = in.read(::in(5s));
    EXPECT_EQ(r.status, Status::EndOfStream) << r.error;
}

TEST(MessageChannelTest, StreamEndingInsideAMessageIsAProtocolError)
{
    {
        Pipe pipe;
        writeAll(pipe.writeFd, std::string("\x10\x00", 2));
        pipe.closeWrite();
        MessageChannel in(pipe.readFd, -1);
        MessageChannel::ReadResult r = in.read(::in(1s));
        EXPECT_EQ(r.status, Status::ProtocolError);
        EXPECT_NE(r.error.find("inside a message header"), std::string::npos) << r.error;
    }
    {
        Pipe pipe;
        writeAll(pipe.writeFd, frame("{\"a\":1}").substr(0, 8));
        pipe.closeWrite();
        MessageChannel in(pipe.readFd, -1);
        MessageChannel::ReadResult r = in.read(::in(1s));
        EXPECT_EQ(r.status, Status::ProtocolError);
        EXPECT_NE(r.error.find("(8 of 11 bytes)"), std::string::npos) << r.error;
        EXPECT_TRUE(in.broken());
    }
}

TEST(MessageChannelTest, WritingToAClosedPipeReportsPeerClosedWithoutSigpipe)
{
    // SIGPIPE keeps its default disposition (terminate): the test process survives only because
    // the channel blocks and discards the signal its own write raises.
    struct sigaction current {};
    ASSERT_EQ(::sigaction(SIGPIPE, nullptr, &current), 0);
    ASSERT_EQ(current.sa_handler, SIG_DFL);

    Pipe pipe;
    pipe.closeRead();
    MessageChannel out(-1, pipe.writeFd);
    MessageChannel::WriteResult w = out.write(json{{"to", "nobody"}});
    EXPECT_EQ(w.status, MessageChannel::WriteStatus::PeerClosed);
    EXPECT_NE(w.error.find("broken pipe"), std::string::npos) << w.error;

    sigset_t pending;
    sigemptyset(&pending);
    ASSERT_EQ(::sigpending(&pending), 0);
    EXPECT_EQ(sigismember(&pending, SIGPIPE), 0) << "the SIGPIPE must not stay pending";
    sigset_t mask;
    ASSERT_EQ(::pthread_sigmask(SIG_BLOCK, nullptr, &mask), 0);
    EXPECT_EQ(sigismember(&mask, SIGPIPE), 0) << "the signal mask must be restored";
}

TEST(MessageChannelTest, WriteDeadlineOnAFullNonBlockingPipeTimesOutAndBreaksTheOutput)
{
    Pipe pipe;
    ASSERT_EQ(::fcntl(pipe.writeFd, F_SETFL, O_NONBLOCK), 0);
    MessageChannel out(-1, pipe.writeFd);
    const auto before = std::chrono::steady_clock::now();
    MessageChannel::WriteResult w = out.write(json{{"data", std::string(1u << 20, 'z')}}, in(100ms));
    EXPECT_EQ(w.status, MessageChannel::WriteStatus::Timeout) << w.error;
    EXPECT_LT(std::chrono::steady_clock::now() - before, 2s);
    EXPECT_EQ(out.write(json{{"after", 1}}).status, MessageChannel::WriteStatus::IoError)
        << "a half-written frame cannot be followed by another";
}

TEST(MessageChannelTest, PollTimeoutRoundsUp)
{
    EXPECT_EQ(MessageChannel::pollTimeoutMs(std::nullopt), -1);
    EXPECT_EQ(MessageChannel::pollTimeoutMs(MessageChannel::Clock::now() - 1s), 0);
    const int ms = MessageChannel::pollTimeoutMs(MessageChannel::Clock::now() + std::chrono::microseconds(1500));
    EXPECT_GE(ms, 1);
    EXPECT_LE(ms, 2);
}

} // namespace
