#include "evaluation/SanitizerTool.h"

#include "util/AtomicFile.h"
#include "util/ChildProcess.h"

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <unistd.h>

namespace kforge::core {
namespace {

using nlohmann::json;

// A log path no other run of this process uses, even when several tools (or exports) run at once.
std::filesystem::path freshLogPath(const std::string& toolName)
{
    static std::atomic<unsigned> counter{0};
    return std::filesystem::temp_directory_path() /
        ("kforge-sanitizer-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-" + toolName + ".log");
}

// The last non-empty line of a log, for a failure line that says where the tool stopped.
std::string lastLine(const std::string& text)
{
    std::size_t end = text.find_last_not_of("\r\n \t");
    if (end == std::string::npos)
        return {};
    const std::size_t start = text.rfind('\n', end);
    return text.substr(start == std::string::npos ? 0 : start + 1,
                       end - (start == std::string::npos ? 0 : start + 1) + 1);
}

} // namespace

std::string findComputeSanitizer()
{
    return findExecutable(
        "compute-sanitizer",
        {"/usr/local/cuda/bin/compute-sanitizer", "/usr/local/cuda/compute-sanitizer/compute-sanitizer"});
}

std::optional<int> sanitizerErrorCount(const std::string& log)
{
    static const std::regex errorSummary(R"(ERROR SUMMARY: (\d+) error)");
    static const std::regex raceSummary(R"(RACECHECK SUMMARY: .*\((\d+) error)");
    std::smatch match;
    if (std::regex_search(log, match, raceSummary))
        return std::stoi(match[1].str());
    if (std::regex_search(log, match, errorSummary))
        return std::stoi(match[1].str());
    return std::nullopt;
}

SanitizerToolRun runSanitizerTool(const std::string& sanitizer, const std::string& toolName,
                                  const json& evaluatePayload, const WorkerCommand& worker,
                                  std::chrono::milliseconds timeout)
{
    const std::filesystem::path log = freshLogPath(toolName);
    std::error_code ec;
    std::filesystem::remove(log, ec);
    WorkerCommand command;
    command.executable = sanitizer;
    // API errors are not the candidate's: the evaluator probes kernel signatures with
    // cuFuncGetParamInfo past the last parameter on purpose (the driver has no count query).
    command.arguments = {"--tool",         toolName, "--log-file",          log.string(),
                         "--print-limit",  "20",     "--report-api-errors", "no",
                         worker.executable};
    command.arguments.insert(command.arguments.end(), worker.arguments.begin(), worker.arguments.end());
    command.environment = worker.environment;
    command.environment.emplace_back("PYTORCH_NO_CUDA_MEMORY_CACHING", "1");
    command.startTimeout = std::chrono::minutes(5);
    command.shutdownGrace = kSanitizerExitGrace;
    // Where a gate's time goes (start-up under the tool, the evaluation, the exit that writes the
    // summary) is recorded with its verdict: exports of large models spend most of their time here.
    using Clock = std::chrono::steady_clock;
    const auto secondsBetween = [](Clock::time_point from, Clock::time_point to) {
        return std::chrono::duration<double>(to - from).count();
    };
    WorkerClient sanitized(command);
    const Clock::time_point started = Clock::now();
    WorkerResponse response = sanitized.start();
    const Clock::time_point up = Clock::now();
    if (response.ok())
        response = sanitized.request("evaluate", evaluatePayload, timeout);
    const Clock::time_point evaluated = Clock::now();
    sanitized.shutdown();
    const Clock::time_point exited = Clock::now();
    Result<std::string> read = readWholeFile(log);
    const std::string text = read.ok() ? read.value() : std::string();
    std::filesystem::remove(log, ec);

    const std::optional<int> errors = sanitizerErrorCount(text);
    SanitizerToolRun run;
    run.record =
        json{{"errors", errors ? json(*errors) : json()},
             {"evaluation", response.ok() ? response.result.value("status", std::string()) : response.describe()},
             {"seconds",
              json{{"start", secondsBetween(started, up)},
                   {"evaluate", secondsBetween(up, evaluated)},
                   {"exit", secondsBetween(evaluated, exited)}}}};
    if (errors && *errors == 0 && response.ok())
        return run;
    run.record["log"] = text.size() > 16384 ? text.substr(0, 16384) + "\n[truncated]" : text;
    std::string what;
    if (!response.ok())
        what = response.describe();
    else if (errors)
        what = std::to_string(*errors) + " error(s)";
    else if (text.empty())
        what = "no summary in its log (the log is empty)";
    else
        what = "no summary in its log (it ends: " + lastLine(text) + ")";
    run.failure = "compute-sanitizer " + toolName + ": " + what;
    return run;
}

} // namespace kforge::core
