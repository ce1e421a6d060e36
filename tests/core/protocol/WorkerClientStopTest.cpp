// WorkerClient::request with a stop flag: the flag kills the worker while a reply is awaited
// (outcome Stopped, within tens of ms), an unset flag changes nothing, and the next request starts
// a fresh worker.

#include "protocol/WorkerClient.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <future>
#include <sys/wait.h>
#include <thread>

using namespace kforge::core;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

WorkerCommand fakeWorker()
{
    WorkerCommand command;
    command.executable = KFORGE_FAKE_WORKER;
    command.startTimeout = 10s;
    return command;
}

TEST(WorkerClientStop, StopFlagKillsTheWorkerWhileWaiting)
{
    WorkerClient client(fakeWorker());
    ASSERT_TRUE(client.start().ok());
    const pid_t pid = client.pid();
    std::atomic<bool> stop{false};
    std::thread stopper([&] {
        std::this_thread::sleep_for(200ms);
        stop = true;
    });
    const auto start = std::chrono::steady_clock::now();
    WorkerResponse response = client.request("sleep", json{{"seconds", 30}}, 60s, &stop);
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    stopper.join();
    EXPECT_EQ(response.outcome, WorkerOutcome::Stopped) << response.describe();
    EXPECT_STREQ(workerOutcomeName(response.outcome), "stopped");
    EXPECT_LT(took, 2.0);
    EXPECT_FALSE(client.running());
    int status = 0;
    EXPECT_TRUE(::waitpid(pid, &status, WNOHANG) < 0 && errno == ECHILD) << "the worker was not reaped";
    EXPECT_TRUE(::kill(pid, 0) != 0 && errno == ESRCH) << "the worker still runs";

    WorkerResponse next = client.request("echo", json{{"x", 1}}, 10s, &stop); // a set flag at the start
    EXPECT_EQ(next.outcome, WorkerOutcome::Stopped);
    std::atomic<bool> clear{false};
    WorkerResponse fresh = client.request("echo", json{{"x", 2}}, 10s, &clear);
    ASSERT_TRUE(fresh.ok()) << fresh.describe();
    EXPECT_EQ(fresh.result, json({{"x", 2}}));
}

TEST(WorkerClientStop, UnsetFlagWaitsForTheReplyAndKeepsTheTimeout)
{
    WorkerClient client(fakeWorker());
    std::atomic<bool> stop{false};
    WorkerResponse slept = client.request("sleep", json{{"seconds", 0.3}}, 10s, &stop);
    ASSERT_TRUE(slept.ok()) << slept.describe();
    const auto start = std::chrono::steady_clock::now();
    WorkerResponse late = client.request("sleep", json{{"seconds", 30}}, 500ms, &stop);
    EXPECT_EQ(late.outcome, WorkerOutcome::Timeout) << late.describe();
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 3.0);
}

} // namespace
