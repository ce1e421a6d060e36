// WorkerClient against a real child process: kforge_fake_worker hangs, crashes and exits on
// request, and the client must report each failure distinctly and recover with a fresh worker.

#include "protocol/WorkerClient.h"
#include "protocol/Base64.h"
#include "protocol/WorkerProtocol.h"
#include "util/SecretEnvironment.h"

#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <random>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace kforge::core;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

WorkerCommand fakeWorker(std::vector<std::string> arguments = {})
{
    WorkerCommand command;
    command.executable = KFORGE_FAKE_WORKER;
    command.arguments = std::move(arguments);
    command.startTimeout = 10s;
    command.shutdownGrace = 2s;
    return command;
}

// True when `pid` is neither running nor a zombie of ours.
bool processGone(pid_t pid)
{
    int status = 0;
    const bool notOurChild = ::waitpid(pid, &status, WNOHANG) < 0 && errno == ECHILD;
    const bool noProcess = ::kill(pid, 0) != 0 && errno == ESRCH;
    return notOurChild && noProcess;
}

double secondsSince(std::chrono::steady_clock::time_point start)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST(WorkerClientTest, HelloRoundTrip)
{
    WorkerClient client(fakeWorker({"--tag", "gpu0"}));
    EXPECT_FALSE(client.running());
    WorkerResponse hello = client.start();
    ASSERT_TRUE(hello.ok()) << hello.describe();
    EXPECT_TRUE(client.running());
    EXPECT_GT(client.pid(), 0);
    EXPECT_EQ(hello.result["protocolVersion"], kWorkerProtocolVersion);
    EXPECT_EQ(hello.result["pid"], client.pid());
    EXPECT_EQ(hello.result["info"], json({{"worker", "fake"}, {"gpu", false}, {"tag", "gpu0"}}));
    EXPECT_EQ(client.hello(), hello.result);
    EXPECT_EQ(client.restartCount(), 0);
    const pid_t pid = client.pid();
    EXPECT_TRUE(client.start().ok());
    EXPECT_EQ(client.pid(), pid) << "start() on a running worker keeps it";
}

TEST(WorkerClientTest, EchoRoundTripsUnicodeAndABase64MegabyteByteExact)
{
    std::string blob(1u << 20, '\0');
    std::mt19937 rng(2024);
    for (char& c : blob)
        c = static_cast<char>(rng());
    const std::string text = "h\u00e9llo \u2713 \u65e5\u672c\u8a9e \U0001F680 \"quoted\" \\ \n\t";
    const json payload{{"text", text}, {"cubin", base64Encode(blob)}, {"nested", {{"a", {1, 2.5, nullptr}}}}};

    WorkerClient client(fakeWorker());
    WorkerResponse reply = client.request("echo", payload, 10s);
    ASSERT_TRUE(reply.ok()) << reply.describe();
    EXPECT_EQ(reply.outcome, WorkerOutcome::Ok);
    EXPECT_EQ(reply.result, payload);
    EXPECT_EQ(reply.result["text"].get<std::string>(), text);
    Result<std::string> back = base64Decode(reply.result["cubin"].get<std::string>());
    ASSERT_TRUE(back.ok()) << back.error().toString();
    EXPECT_TRUE(*back == blob) << "1 MiB payload differs after the round trip";
}

TEST(WorkerClientTest, LargeReplyArrivesWhole)
{
    WorkerClient client(fakeWorker());
    const size_t bytes = 8u << 20;
    WorkerResponse reply = client.request("big", json{{"bytes", bytes}}, 20s);
    ASSERT_TRUE(reply.ok()) << reply.describe();
    const std::string& data = reply.result["data"].get_ref<const std::string&>();
    ASSERT_EQ(data.size(), bytes);
    bool pattern = true;
    for (size_t i = 0; i < bytes && pattern; i += 4093)
        pattern = data[i] == static_cast<char>('a' + i % 26);
    EXPECT_TRUE(pattern);
    EXPECT_EQ(data.back(), static_cast<char>('a' + (bytes - 1) % 26));
}

TEST(WorkerClientTest, TimeoutKillsTheWorkerAndTheNextRequestGetsAFreshOne)
{
    WorkerClient client(fakeWorker());
    ASSERT_TRUE(client.start().ok());
    const pid_t first = client.pid();

    const auto start = std::chrono::steady_clock::now();
    WorkerResponse reply = client.request("sleep", json{{"seconds", 30}}, 500ms);
    const double took = secondsSince(start);
    EXPECT_EQ(reply.outcome, WorkerOutcome::Timeout) << reply.describe();
    EXPECT_STREQ(workerOutcomeName(reply.outcome), "timeout");
    EXPECT_NE(reply.message.find("timed out after 0.5 s"), std::string::npos) << reply.message;
    EXPECT_EQ(reply.workerPid, first);
    EXPECT_GE(took, 0.5);
    EXPECT_LT(took, 1.5) << "the watchdog must fire at the limit";
    EXPECT_FALSE(client.running());
    EXPECT_TRUE(processGone(first)) << "the hung worker is killed and reaped";

    WorkerResponse next = client.request("echo", json{{"after", "timeout"}}, 10s);
    ASSERT_TRUE(next.ok()) << next.describe();
    EXPECT_EQ(next.result, json({{"after", "timeout"}}));
    EXPECT_NE(client.pid(), first);
    EXPECT_EQ(next.workerPid, client.pid());
    EXPECT_EQ(client.restartCount(), 1);
}

TEST(WorkerClientTest, SegfaultIsReportedWithTheSignalNameAndTheStderrLine)
{
    WorkerClient client(fakeWorker());
    ASSERT_TRUE(client.start().ok());
    const pid_t first = client.pid();

    WorkerResponse reply = client.request("crash", json{{"signal", "SEGV"}}, 10s);
    EXPECT_EQ(reply.outcome, WorkerOutcome::Crashed) << reply.describe();
    EXPECT_EQ(reply.termSignal, std::optional<int>(SIGSEGV));
    EXPECT_FALSE(reply.exitStatus.has_value());
    EXPECT_EQ(reply.message, "worker killed by SIGSEGV");
    EXPECT_NE(reply.stderrTail.find("CUDA error: an illegal memory access was encountered"), std::string::npos)
        << reply.stderrTail;
    EXPECT_EQ(reply.describe(),
              "crash: worker killed by SIGSEGV (stderr: CUDA error: an illegal memory access was encountered)");
    EXPECT_TRUE(processGone(first));

    ASSERT_TRUE(client.request("echo", json::object(), 10s).ok());
    EXPECT_NE(client.pid(), first);
    EXPECT_EQ(client.restartCount(), 1);
}

TEST(WorkerClientTest, AbortIsReportedAsSigabrt)
{
    WorkerClient client(fakeWorker());
    WorkerResponse reply = client.request("crash", json{{"signal", "ABRT"}}, 10s);
    EXPECT_EQ(reply.outcome, WorkerOutcome::Crashed);
    EXPECT_EQ(reply.termSignal, std::optional<int>(SIGABRT));
    EXPECT_NE(reply.message.find("worker killed by SIGABRT"), std::string::npos) << reply.message;
}

TEST(WorkerClientTest, ExitWithoutReplyReportsTheStatus)
{
    WorkerClient client(fakeWorker());
    ASSERT_TRUE(client.start().ok());
    const pid_t first = client.pid();
    WorkerResponse reply = client.request("exit", json{{"status", 3}}, 10s);
    EXPECT_EQ(reply.outcome, WorkerOutcome::Crashed);
    EXPECT_STREQ(workerOutcomeName(reply.outcome), "crashed");
    EXPECT_EQ(reply.exitStatus, std::optional<int>(3));
    EXPECT_EQ(reply.message, "worker exited with status 3");
    EXPECT_NE(reply.stderrTail.find("exiting with status 3"), std::string::npos) << reply.stderrTail;
    EXPECT_TRUE(processGone(first));
    EXPECT_TRUE(client.request("echo", nullptr, 10s).ok());
    EXPECT_EQ(client.restartCount(), 1);
}

TEST(WorkerClientTest, HandlerErrorsKeepTheSameWorker)
{
    WorkerClient client(fakeWorker());
    ASSERT_TRUE(client.start().ok());
    const pid_t pid = client.pid();

    WorkerResponse failed = client.request("fail", nullptr, 10s);
    EXPECT_EQ(failed.outcome, WorkerOutcome::HandlerError);
    EXPECT_EQ(failed.errorCode, "unsupported");
    EXPECT_EQ(failed.message, "fake kernel: this fake cannot do that");
    EXPECT_EQ(failed.describe(), "fail: fake kernel: this fake cannot do that [unsupported]");

    WorkerResponse threw = client.request("throw", nullptr, 10s);
    EXPECT_EQ(threw.outcome, WorkerOutcome::HandlerError);
    EXPECT_EQ(threw.errorCode, kWorkerErrorHandlerException);
    EXPECT_NE(threw.message.find("boom"), std::string::npos);

    WorkerResponse unknown = client.request("no-such-type", json{{"x", 1}}, 10s);
    EXPECT_EQ(unknown.outcome, WorkerOutcome::HandlerError);
    EXPECT_EQ(unknown.errorCode, kWorkerErrorUnknownType);
    EXPECT_NE(unknown.message.find("no-such-type"), std::string::npos);

    EXPECT_TRUE(client.request("echo", nullptr, 10s).ok());
    EXPECT_EQ(client.pid(), pid);
    EXPECT_EQ(client.restartCount(), 0);
}

TEST(WorkerClientTest, StrayStdoutDoesNotCorruptTheProtocolAndLandsInStderr)
{
    WorkerClient client(fakeWorker());
    WorkerResponse reply = client.request("noise", nullptr, 10s);
    ASSERT_TRUE(reply.ok()) << reply.describe();
    EXPECT_TRUE(client.request("echo", json{{"still", "fine"}}, 10s).ok());
    // The stderr reader runs on its own thread; give it a moment.
    const auto until = std::chrono::steady_clock::now() + 5s;
    while (client.stderrTail().find("more stray stdout") == std::string::npos &&
           std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(5ms);
    EXPECT_NE(client.stderrTail().find("stray stdout from a library"), std::string::npos) << client.stderrTail();
    EXPECT_NE(client.stderrTail().find("more stray stdout"), std::string::npos) << client.stderrTail();
}

TEST(WorkerClientTest, EnvironmentAndArgumentsReachTheWorker)
{
    WorkerCommand command = fakeWorker();
    command.environment = {{"CUDA_VISIBLE_DEVICES", "3"}, {"KFORGE_FAKE_SETTING", "on"}};
    WorkerClient client(command);
    WorkerResponse cuda = client.request("env", json{{"name", "CUDA_VISIBLE_DEVICES"}}, 10s);
    ASSERT_TRUE(cuda.ok()) << cuda.describe();
    EXPECT_EQ(cuda.result["value"], "3");
    EXPECT_EQ(client.request("env", json{{"name", "KFORGE_FAKE_SETTING"}}, 10s).result["value"], "on");
    EXPECT_EQ(client.request("env", json{{"name", "PATH"}}, 10s).result["value"], std::getenv("PATH"))
        << "the engine's environment is inherited";
}

TEST(WorkerClientTest, CredentialsInTheEnginesEnvironmentNeverReachTheWorker)
{
    // The worker runs candidate kernels: an LLM provider's key in the engine's environment must not
    // be there for a kernel (or anything it tricks the worker into) to read.
    ::setenv("KFORGE_TEST_OPENAI_API_KEY", "sk-must-not-leak", 1);
    ::setenv("MY_LLM_KEY", "sk-must-not-leak-either", 1);
    ::setenv("KFORGE_KEYBOARD_LAYOUT", "kept", 1);
    WorkerClient client(fakeWorker());
    WorkerResponse key = client.request("env", json{{"name", "KFORGE_TEST_OPENAI_API_KEY"}}, 10s);
    ASSERT_TRUE(key.ok()) << key.describe();
    EXPECT_TRUE(key.result["value"].is_null()) << key.result.dump();
    EXPECT_TRUE(client.request("env", json{{"name", "MY_LLM_KEY"}}, 10s).result["value"].is_null());
    EXPECT_EQ(client.request("env", json{{"name", "KFORGE_KEYBOARD_LAYOUT"}}, 10s).result["value"], "kept");
    ::unsetenv("KFORGE_TEST_OPENAI_API_KEY");
    ::unsetenv("MY_LLM_KEY");
    ::unsetenv("KFORGE_KEYBOARD_LAYOUT");
}

TEST(WorkerClientTest, SecretEnvironmentNamesAreTheConventionalOnes)
{
    for (const char* name : {"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "MY_LLM_KEY", "HF_TOKEN", "AWS_SECRET_ACCESS_KEY",
                             "DB_PASSWORD", "GOOGLE_APPLICATION_CREDENTIALS", "openai_apikey", "XAPIKEY"})
        EXPECT_TRUE(isSecretEnvironmentName(name)) << name;
    for (const char* name : {"PATH", "HOME", "CUDA_VISIBLE_DEVICES", "LD_LIBRARY_PATH", "KFORGE_WORKER", "KEYBOARD",
                             "MONKEY_PATCH", "TOKENIZERS_PARALLELISM", "PYTHONPATH"})
        EXPECT_FALSE(isSecretEnvironmentName(name)) << name;
}

TEST(WorkerClientTest, MissingOrNonExecutableWorkerIsAClearSpawnError)
{
    WorkerCommand command = fakeWorker();
    command.executable = "/nonexistent/kforge-worker";
    WorkerClient missing(command);
    WorkerResponse reply = missing.request("echo", nullptr, 1s);
    EXPECT_EQ(reply.outcome, WorkerOutcome::SpawnFailed);
    EXPECT_EQ(reply.message, "cannot start worker '/nonexistent/kforge-worker': no such file");
    EXPECT_FALSE(missing.running());
    EXPECT_EQ(missing.start().outcome, WorkerOutcome::SpawnFailed);

    const std::filesystem::path plain =
        std::filesystem::temp_directory_path() / ("kforge_not_executable_" + std::to_string(::getpid()));
    std::ofstream(plain) << "#!/bin/sh\nexit 0\n";
    std::filesystem::permissions(plain, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    command.executable = plain.string();
    WorkerClient notExecutable(command);
    reply = notExecutable.start();
    std::filesystem::remove(plain);
    EXPECT_EQ(reply.outcome, WorkerOutcome::SpawnFailed);
    // access(X_OK) fails even for root: the file has no execute bit at all.
    EXPECT_NE(reply.message.find("not executable"), std::string::npos) << reply.message;
    EXPECT_EQ(reply.message.find('\n'), std::string::npos);
    EXPECT_NE(reply.message.find(plain.string()), std::string::npos) << reply.message;
}

TEST(WorkerClientTest, WorkerThatDiesOrRefusesBeforeHelloIsASpawnFailureWithItsStderr)
{
    WorkerClient dies(fakeWorker({"--exit-on-start", "4"}));
    WorkerResponse reply = dies.start();
    EXPECT_EQ(reply.outcome, WorkerOutcome::SpawnFailed);
    EXPECT_NE(reply.message.find("did not answer hello: worker exited with status 4"), std::string::npos)
        << reply.message;
    EXPECT_NE(reply.stderrTail.find("cannot initialize the device"), std::string::npos) << reply.stderrTail;
    EXPECT_FALSE(dies.running());

    WorkerClient refuses(fakeWorker({"--refuse-hello"}));
    reply = refuses.request("echo", nullptr, 5s);
    EXPECT_EQ(reply.outcome, WorkerOutcome::SpawnFailed);
    EXPECT_EQ(reply.requestType, "echo");
    EXPECT_NE(reply.message.find("refused hello: fake: no device for this worker"), std::string::npos) << reply.message;
    EXPECT_FALSE(refuses.running());
}

TEST(WorkerClientTest, InvalidRequestsAreNotSent)
{
    WorkerClient client(fakeWorker());
    EXPECT_EQ(client.request("echo", json{{"id", 1}}, 1s).outcome, WorkerOutcome::InvalidRequest);
    EXPECT_EQ(client.request("echo", json::array(), 1s).outcome, WorkerOutcome::InvalidRequest);
    EXPECT_EQ(client.request("shutdown", nullptr, 1s).outcome, WorkerOutcome::InvalidRequest);
    EXPECT_FALSE(client.running()) << "no worker is started for a request that cannot be sent";
}

TEST(WorkerClientTest, WorkerKilledWhileIdleIsReplacedBeforeTheNextRequest)
{
    WorkerClient client(fakeWorker());
    ASSERT_TRUE(client.start().ok());
    const pid_t first = client.pid();
    ASSERT_EQ(::kill(first, SIGKILL), 0);
    std::this_thread::sleep_for(50ms);
    WorkerResponse reply = client.request("echo", json{{"n", 1}}, 10s);
    ASSERT_TRUE(reply.ok()) << reply.describe();
    EXPECT_NE(client.pid(), first);
    EXPECT_EQ(client.restartCount(), 1);
    EXPECT_TRUE(processGone(first));
}

TEST(WorkerClientTest, ShutdownIsPoliteAndTheDestructorLeavesNoChild)
{
    pid_t pid = 0;
    {
        WorkerClient client(fakeWorker());
        ASSERT_TRUE(client.start().ok());
        pid = client.pid();
        ASSERT_GT(pid, 0);
        EXPECT_EQ(::kill(pid, 0), 0);
    }
    EXPECT_TRUE(processGone(pid)) << "destructor left a running child or a zombie";

    WorkerClient client(fakeWorker());
    ASSERT_TRUE(client.start().ok());
    pid = client.pid();
    const auto start = std::chrono::steady_clock::now();
    client.shutdown();
    EXPECT_LT(secondsSince(start), 1.0) << "a willing worker exits at once";
    EXPECT_FALSE(client.running());
    EXPECT_TRUE(processGone(pid));
    EXPECT_TRUE(client.request("echo", nullptr, 10s).ok()) << "a later request starts a new worker";
    EXPECT_EQ(client.restartCount(), 0) << "a polite shutdown is not a lost worker";
}

TEST(WorkerClientTest, WorkerThatIgnoresShutdownIsKilledAfterTheGrace)
{
    WorkerCommand command = fakeWorker({"--ignore-shutdown"});
    command.shutdownGrace = 300ms;
    pid_t pid = 0;
    const auto start = std::chrono::steady_clock::now();
    {
        WorkerClient client(command);
        ASSERT_TRUE(client.start().ok());
        pid = client.pid();
    }
    const double took = secondsSince(start);
    EXPECT_TRUE(processGone(pid));
    EXPECT_LT(took, 2.0);
}

TEST(WorkerClientTest, ClientsOnSeveralThreadsAreIndependent)
{
    constexpr int kClients = 3;
    int okCounts[kClients] = {};
    WorkerOutcome timeoutOutcome = WorkerOutcome::Ok;
    std::vector<std::thread> threads;
    for (int c = 0; c < kClients; ++c) {
        threads.emplace_back([&, c] {
            WorkerClient client(fakeWorker({"--tag", std::to_string(c)}));
            for (int i = 0; i < 20; ++i) {
                WorkerResponse r = client.request("echo", json{{"client", c}, {"i", i}}, 10s);
                if (r.ok() && r.result == json({{"client", c}, {"i", i}}))
                    ++okCounts[c];
                if (c == 0 && i == 10) // one client's worker hangs; the others must not notice
                    timeoutOutcome = client.request("sleep", json{{"seconds", 30}}, 200ms).outcome;
            }
            if (client.hello()["info"]["tag"] != std::to_string(c))
                okCounts[c] = -1;
        });
    }
    for (std::thread& t : threads)
        t.join();
    for (int c = 0; c < kClients; ++c)
        EXPECT_EQ(okCounts[c], 20) << "client " << c;
    EXPECT_EQ(timeoutOutcome, WorkerOutcome::Timeout);
}

} // namespace
