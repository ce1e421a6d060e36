#include "protocol/StreamTail.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

using namespace kforge::core;
using namespace std::chrono_literals;

namespace {

TEST(StreamTailTest, KeepsOnlyTheLastBytesAndNeverBlocksTheWriter)
{
    int fds[2];
    ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
    StreamTail tail(1000);
    tail.start(fds[0]);
    // 300 KB is far more than a pipe holds: the writer only finishes if the tail keeps draining.
    std::string all;
    for (int i = 0; i < 30000; ++i)
        all += "line " + std::to_string(i) + "\n";
    size_t done = 0;
    while (done < all.size()) {
        const ssize_t n = ::write(fds[1], all.data() + done, all.size() - done);
        ASSERT_GT(n, 0);
        done += size_t(n);
    }
    ::close(fds[1]);
    tail.stop(5s);
    const std::string text = tail.text();
    EXPECT_EQ(text.size(), 1000u);
    EXPECT_EQ(text, all.substr(all.size() - 1000));
    EXPECT_EQ(tail.lastLines(2), "line 29998\nline 29999");
}

TEST(StreamTailTest, StopReturnsAfterTheGraceWhenTheWriterStaysOpen)
{
    int fds[2];
    ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
    StreamTail tail;
    tail.start(fds[0]);
    ASSERT_EQ(::write(fds[1], "partial", 7), 7);
    const auto start = std::chrono::steady_clock::now();
    tail.stop(100ms);
    const auto took = std::chrono::steady_clock::now() - start;
    EXPECT_GE(took, 100ms);
    EXPECT_LT(took, 2s);
    EXPECT_EQ(tail.text(), "partial");
    ::close(fds[1]);
}

TEST(StreamTailTest, LastLinesSkipsBlankLinesAndCarriageReturns)
{
    EXPECT_EQ(StreamTail::lastLinesOf("a\nb\r\n\n\nc\n\n", 2), "b\nc");
    EXPECT_EQ(StreamTail::lastLinesOf("only", 3), "only");
    EXPECT_EQ(StreamTail::lastLinesOf("", 3), "");
    EXPECT_EQ(StreamTail::lastLinesOf("x\ny\n", 0), "");
}

} // namespace
