#pragma once
// Runs a piece of a test in a child process whose address space may grow by
// only a fixed amount over the parent's: a reader that allocates beyond it gets
// std::bad_alloc (or dies) instead of taking the machine's memory, and a reader
// that overflows its stack kills only the child. The child's answer (a string)
// comes back through a pipe.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <functional>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace kforge::core::test {

struct BoundedRunResult {
    bool exited = false; // normally, with status 0, having sent its answer
    int signal = 0;      // the signal that killed it, if one did
    std::string answer;
    double seconds = 0;

    std::string describe() const
    {
        if (exited)
            return "answer: " + answer;
        return signal ? "child killed by signal " + std::to_string(signal)
                      : "child failed (std::bad_alloc or an exception escaped)";
    }
};

/// Virtual memory of this process (VmSize), in bytes.
inline std::uint64_t virtualMemoryBytes()
{
    std::ifstream status("/proc/self/status");
    std::string key;
    while (status >> key) {
        if (key == "VmSize:") {
            std::uint64_t kb = 0;
            status >> kb;
            return kb * 1024;
        }
        status.ignore(1 << 20, '\n');
    }
    return 0;
}

/// Runs `work` in a child allowed `extraBytes` of address space over this
/// process's at the fork.
inline BoundedRunResult runBounded(const std::function<std::string()>& work, std::uint64_t extraBytes)
{
    int fds[2];
    EXPECT_EQ(::pipe(fds), 0);
    const auto start = std::chrono::steady_clock::now();
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::close(fds[0]);
        const rlim_t limit = virtualMemoryBytes() + extraBytes;
        const rlimit bound{limit, limit};
        ::setrlimit(RLIMIT_AS, &bound);
        std::string answer;
        try {
            answer = work();
        } catch (...) {
            ::_exit(3);
        }
        std::size_t written = 0;
        while (written < answer.size()) {
            const auto n = ::write(fds[1], answer.data() + written, answer.size() - written);
            if (n <= 0)
                ::_exit(4);
            written += static_cast<std::size_t>(n);
        }
        ::_exit(0);
    }
    ::close(fds[1]);
    BoundedRunResult result;
    char buffer[4096];
    ssize_t n = 0;
    while ((n = ::read(fds[0], buffer, sizeof buffer)) > 0)
        result.answer.append(buffer, static_cast<std::size_t>(n));
    ::close(fds[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    result.exited = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    result.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    return result;
}

} // namespace kforge::core::test
