// Failure reasons reduced to one line (util/FailureText.h): a c10::Error's text with its backtrace,
// multi-line reasons, stderr with trace lines among other lines, bounds, and idempotence.

#include "C10ErrorText.h"

#include "util/FailureText.h"

#include <gtest/gtest.h>

namespace kforge::core {
namespace {

TEST(FailureText, AC10ErrorKeepsItsMessageWithoutTheBacktrace)
{
    const FailureText text =
        failureText("handler of 'evaluate' threw: " + test::c10ErrorText(test::kC10OutOfMemory, 30));
    EXPECT_EQ(text.line, "handler of 'evaluate' threw: " + test::kC10OutOfMemory);
    EXPECT_TRUE(text.detail.empty()) << text.detail; // the message is one line: nothing more to keep
    EXPECT_TRUE(isOneLine(text.line));
}

TEST(FailureText, AMultiLineC10MessageKeepsTheRestAsDetail)
{
    // c10's CUDA check: a first line, advice lines, then the backtrace.
    const std::string what =
        "CUDA error: an illegal memory access was encountered\n"
        "CUDA kernel errors might be asynchronously reported at some other API call, so the "
        "stacktrace below might be incorrect.\n"
        "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n\n"
        "Exception raised from c10_cuda_check_implementation at /pytorch/c10/cuda/"
        "CUDAException.cpp:43 (most recent call first):\n"
        "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7f in libc10.so)\n"
        "frame #1: <unknown function> + 0x1fa3 (0x7f in libc10_cuda.so)\n";
    const FailureText text = failureText(what);
    EXPECT_EQ(text.line, "CUDA error: an illegal memory access was encountered");
    EXPECT_NE(text.detail.find("CUDA_LAUNCH_BLOCKING=1"), std::string::npos) << text.detail;
    EXPECT_EQ(text.detail.find("Exception raised from"), std::string::npos) << text.detail;
    EXPECT_EQ(text.detail.find("frame #"), std::string::npos) << text.detail;
}

TEST(FailureText, MultiLineReasonsGiveTheirFirstMeaningfulLine)
{
    EXPECT_EQ(failureText("\n\n  \tfirst line\t with a tab  \r\nsecond line\n").line, "first line with a tab");
    EXPECT_EQ(failureText("\n\n  \tfirst line\t with a tab  \r\nsecond line\n").detail,
              "first line\t with a tab  \r\nsecond line");
    EXPECT_EQ(failureText("only one line").line, "only one line");
    EXPECT_TRUE(failureText("only one line").detail.empty());
    EXPECT_EQ(failureText("  \n \r\n").line, "");
    EXPECT_EQ(failureText("").line, "");
    // A trace with nothing before it says nothing.
    EXPECT_EQ(failureText("Exception raised from f at x.cpp:1 (most recent call first):\nframe #0: f\n").line, "");
    EXPECT_EQ(oneLineReason("a\nb"), "a");
}

TEST(FailureText, LongLinesAreCutWithinTheBoundAndReducingTwiceChangesNothing)
{
    const std::string longLine(kMaxReasonLineBytes * 3, 'x');
    const FailureText once = failureText(longLine);
    EXPECT_LE(once.line.size(), kMaxReasonLineBytes);
    EXPECT_TRUE(once.line.ends_with(" [truncated]"));
    EXPECT_EQ(failureText(once.line).line, once.line);
    const std::string multi = "why\n" + std::string(kMaxReasonDetailBytes * 2, 'y');
    EXPECT_LE(failureText(multi).detail.size(), kMaxReasonDetailBytes + 100);
    // A cut never splits a UTF-8 sequence: "µ" is two bytes.
    std::string micro;
    while (micro.size() < kMaxReasonLineBytes + 10)
        micro += "\xc2\xb5";
    const std::string cut = failureText(micro).line;
    EXPECT_EQ(cut.substr(0, cut.size() - std::string(" [truncated]").size()).size() % 2, 0u);
}

TEST(FailureText, StderrKeepsItsOtherLinesAroundATrace)
{
    const std::string stderrText = "terminate called after throwing an instance of 'c10::OutOfMemoryError'\n"
                                   "  what():  CUDA out of memory. Tried to allocate 2.00 GiB.\n"
                                   "Exception raised from malloc at CUDACachingAllocator.cpp:1313 (most recent call "
                                   "first):\n"
                                   "frame #0: c10::Error::Error + 0x96 (0x7f in libc10.so)\n"
                                   "frame #29: __libc_start_main + 0xf3 (0x7f in libc.so.6)\n"
                                   "<omitting python frames>\n"
                                   "kforge-worker: CUDA error during timing: cudaErrorIllegalAddress\n";
    EXPECT_EQ(withoutBacktraceLines(stderrText),
              "terminate called after throwing an instance of 'c10::OutOfMemoryError'\n"
              "  what():  CUDA out of memory. Tried to allocate 2.00 GiB.\n"
              "kforge-worker: CUDA error during timing: cudaErrorIllegalAddress\n");
    // "frame #" only counts with its number: ordinary text that starts so stays.
    EXPECT_EQ(withoutBacktraceLines("frame #x is not a frame"), "frame #x is not a frame");
    EXPECT_EQ(reasonDetail("  a\nframe #0: f\nb  \n"), "a\nb");
}

TEST(FailureText, IsOneLineRefusesEveryControlCharacter)
{
    EXPECT_TRUE(isOneLine("passed: 1.02x (µs)"));
    for (const char* text : {"a\nb", "a\rb", "a\tb", "a\x1b[31mb"})
        EXPECT_FALSE(isOneLine(text)) << text;
}

} // namespace
} // namespace kforge::core
