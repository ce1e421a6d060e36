#include "model/EvaluationReport.h"

#include <cmath>
#include <limits>

namespace kforge::core {
namespace {

using nlohmann::json;

// Field access that never throws: a missing field, a null or a value of another type is absent.
const json* field(const json& object, const char* key)
{
    if (!object.is_object())
        return nullptr;
    const auto it = object.find(key);
    return it == object.end() || it->is_null() ? nullptr : &*it;
}

const json* objectField(const json& object, const char* key)
{
    const json* value = field(object, key);
    return value && value->is_object() ? value : nullptr;
}

const json* arrayField(const json& object, const char* key)
{
    const json* value = field(object, key);
    return value && value->is_array() ? value : nullptr;
}

std::string stringField(const json& object, const char* key)
{
    const json* value = field(object, key);
    return value && value->is_string() ? value->get<std::string>() : std::string();
}

std::optional<bool> boolField(const json& object, const char* key)
{
    const json* value = field(object, key);
    return value && value->is_boolean() ? std::optional<bool>(value->get<bool>()) : std::nullopt;
}

std::optional<double> numberField(const json& object, const char* key)
{
    const json* value = field(object, key);
    if (!value || !value->is_number())
        return std::nullopt;
    const double number = value->get<double>();
    return std::isfinite(number) ? std::optional<double>(number) : std::nullopt;
}

// An integer field within [min, max]; a fractional or out-of-range number is absent.
std::optional<std::int64_t> integerField(const json& object, const char* key, std::int64_t min, std::int64_t max)
{
    const std::optional<double> number = numberField(object, key);
    if (!number || *number != std::floor(*number) || *number < static_cast<double>(min) ||
        *number > static_cast<double>(max))
        return std::nullopt;
    return static_cast<std::int64_t>(*number);
}

std::optional<int> intField(const json& object, const char* key)
{
    const auto value = integerField(object, key, 0, std::numeric_limits<int>::max());
    return value ? std::optional<int>(static_cast<int>(*value)) : std::nullopt;
}

// {"median_us", "q1_us", "q3_us"}: a median is required, missing quartiles read as the median.
std::optional<LatencyStats> latencyField(const json& object, const char* key)
{
    const json* stats = objectField(object, key);
    const std::optional<double> median = stats ? numberField(*stats, "median_us") : std::nullopt;
    if (!median)
        return std::nullopt;
    return LatencyStats{*median, numberField(*stats, "q1_us").value_or(*median),
                        numberField(*stats, "q3_us").value_or(*median)};
}

// A speedup: finite and positive, else absent (the evaluator writes 0 when it has none).
std::optional<double> ratioField(const json& object, const char* key)
{
    const std::optional<double> ratio = numberField(object, key);
    return ratio && *ratio > 0 ? ratio : std::nullopt;
}

CompileResult compileOf(const json& compile)
{
    CompileResult result;
    result.ok = boolField(compile, "ok").value_or(false);
    result.architecture = stringField(compile, "architecture");
    result.ms = numberField(compile, "ms");
    result.fromCache = boolField(compile, "from_cache").value_or(false);
    result.log = stringField(compile, "log");
    if (const json* diagnostics = arrayField(compile, "diagnostics")) {
        for (const json& d : *diagnostics) {
            if (!d.is_object())
                continue;
            CompileDiagnostic diagnostic;
            diagnostic.file = stringField(d, "file");
            diagnostic.line = intField(d, "line").value_or(0);
            diagnostic.column = intField(d, "column").value_or(0);
            diagnostic.severity = stringField(d, "severity");
            diagnostic.message = stringField(d, "message");
            result.errors += diagnostic.severity == "error";
            result.warnings += diagnostic.severity == "warning";
            result.diagnostics.push_back(std::move(diagnostic));
        }
    }
    constexpr std::int64_t kMost = std::numeric_limits<std::int64_t>::max();
    if (const json* kernels = arrayField(compile, "kernels")) {
        for (const json& k : *kernels) {
            if (!k.is_object())
                continue;
            KernelResourceUse use;
            use.entry = stringField(k, "entry");
            use.registers = intField(k, "registers");
            use.sharedBytes = integerField(k, "shared_bytes", 0, kMost).value_or(0);
            use.dynamicSharedBytes = integerField(k, "dynamic_shared_bytes", 0, kMost).value_or(0);
            use.spillStoreBytes = integerField(k, "spill_store_bytes", 0, kMost).value_or(0);
            use.spillLoadBytes = integerField(k, "spill_load_bytes", 0, kMost).value_or(0);
            use.threadsPerBlock = integerField(k, "threads_per_block", 0, kMost).value_or(0);
            if (const json* occupancy = objectField(k, "occupancy")) {
                use.occupancy = numberField(*occupancy, "fraction");
                use.warpsPerSm = intField(*occupancy, "warps_per_sm").value_or(0);
                use.maxWarpsPerSm = intField(*occupancy, "max_warps_per_sm").value_or(0);
                use.occupancyLimitedBy = stringField(*occupancy, "limited_by");
            }
            result.kernels.push_back(std::move(use));
        }
    }
    return result;
}

ValidationCheck checkOf(const json& check)
{
    ValidationCheck result;
    result.name = stringField(check, "name");
    result.passed = boolField(check, "passed").value_or(false);
    result.detail = stringField(check, "detail");
    const std::size_t split = result.name.find(": ");
    result.inputSet = split == std::string::npos ? std::string() : result.name.substr(0, split);
    result.check = split == std::string::npos ? result.name : result.name.substr(split + 2);
    return result;
}

ValidationResult validationOf(const json& evaluation)
{
    ValidationResult result;
    result.status = stringField(evaluation, "status");
    if (const json* checks = arrayField(evaluation, "checks"))
        for (const json& check : *checks)
            if (check.is_object())
                result.checks.push_back(checkOf(check));
    result.inputSets = intField(evaluation, "validated_input_sets");
    if (const json* failure = objectField(evaluation, "failure"))
        result.failure = CheckFailure{stringField(*failure, "check"), stringField(*failure, "message")};
    if (const json* device = objectField(evaluation, "device"))
        result.device = *device;
    return result;
}

TimingReport timingOf(const json& timing)
{
    TimingReport result;
    result.method = stringField(timing, "method");
    result.candidate = latencyField(timing, "candidate");
    result.eager = latencyField(timing, "eager");
    result.candidateWarmL2 = latencyField(timing, "candidate_warm_l2");
    result.eagerWarmL2 = latencyField(timing, "eager_warm_l2");
    if (const json* candidate = objectField(timing, "candidate"))
        result.repetitions = intField(*candidate, "repetitions");
    result.pairedSpeedup = ratioField(timing, "speedup");
    result.pairedSpeedupQ1 = ratioField(timing, "speedup_q1");
    result.pairedSpeedupQ3 = ratioField(timing, "speedup_q3");
    result.speedupOfMedians = ratioField(timing, "speedup_of_medians");
    return result;
}

BandwidthReport bandwidthOf(const json& bandwidth)
{
    BandwidthReport result;
    result.bytes = integerField(bandwidth, "bytes", 0, std::numeric_limits<std::int64_t>::max());
    result.achievedGbPerS = numberField(bandwidth, "achieved_gb_per_s");
    result.deviceCopyGbPerS = numberField(bandwidth, "device_copy_gb_per_s");
    result.fractionOfCopy = numberField(bandwidth, "fraction_of_copy");
    result.unavailable = stringField(bandwidth, "unavailable");
    return result;
}

SanitizerResult sanitizerOf(const json& sanitizer)
{
    SanitizerResult result;
    result.checked = boolField(sanitizer, "checked").value_or(false);
    result.passed = boolField(sanitizer, "passed");
    result.reason = stringField(sanitizer, "reason");
    if (const json* tools = objectField(sanitizer, "tools")) {
        for (auto it = tools->begin(); it != tools->end(); ++it) {
            SanitizerToolResult run;
            run.tool = it.key();
            run.errors = intField(it.value(), "errors");
            run.evaluation = stringField(it.value(), "evaluation");
            run.log = stringField(it.value(), "log");
            run.skipped = stringField(it.value(), "skipped");
            result.tools.push_back(std::move(run));
        }
    }
    return result;
}

// The report's "reason" as stored: one line, the rest (trace-free) in "reason_detail". A document
// written before reasons were reduced (a c10 backtrace in it) is rewritten so, in memory and in
// the next save.
FailureText normalizeReason(json& document)
{
    const json* stored = field(document, "reason");
    if (!stored || !stored->is_string())
        return {};
    FailureText reason = failureText(stored->get<std::string>());
    if (const std::string detail = stringField(document, "reason_detail"); !detail.empty())
        reason.detail = reasonDetail(detail);
    if (!isOneLine(stored->get<std::string>())) {
        document["reason"] = reason.line;
        if (!reason.detail.empty())
            document["reason_detail"] = reason.detail;
    }
    return reason;
}

} // namespace

EvaluationReport EvaluationReport::fromJson(const nlohmann::json& document) noexcept
{
    EvaluationReport report;
    try {
        if (!document.is_object())
            return report; // garbage reads as an empty report
        report.m_document = document;
        json& doc = report.m_document;
        report.status = stringField(doc, "status");
        report.reason = normalizeReason(doc);
        if (const json* compile = objectField(doc, "compile"))
            report.compile = compileOf(*compile);
        if (const json* evaluation = objectField(doc, "evaluation")) {
            report.validation = validationOf(*evaluation);
            if (const json* timing = objectField(*evaluation, "timing"))
                report.timing = timingOf(*timing);
            if (const json* bandwidth = objectField(*evaluation, "bandwidth"))
                report.bandwidth = bandwidthOf(*bandwidth);
        }
        if (const json* sanitizer = objectField(doc, "sanitizer"))
            report.sanitizer = sanitizerOf(*sanitizer);
        if (const json* worker = objectField(doc, "worker"))
            if (const json* gpu = objectField(*worker, "gpu"))
                report.gpuModel = stringField(*gpu, "gpu");
    } catch (...) {
        // The accessors check every type; this is the net under them (std::bad_alloc included):
        // a report that cannot be read is an empty one, never an exception.
        return EvaluationReport();
    }
    return report;
}

} // namespace kforge::core
