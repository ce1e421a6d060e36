// EvaluationReport::fromJson: a full bench report typed field by field, a report of an earlier
// version and partial ones (missing fields are absent), garbage (never throws), and reasons that
// arrive with a c10 backtrace (one line on the node, no trace in tree.json).

#include "../C10ErrorText.h"
#include "SearchTestSupport.h"

#include "model/EvaluationReport.h"
#include "model/SearchTreeJson.h"
#include "search/TreeStore.h"

#include <gtest/gtest.h>

#include <fstream>
#include <limits>
#include <sstream>

namespace kforge::core {
namespace {

using nlohmann::json;
using test::ScratchDir;

// A report as benchCandidate writes it for a candidate that passed with the sanitizer (the layout
// of docs/validation.md), speedup spread and resource use included.
json fullReport()
{
    return json::parse(R"({
      "card": "3f2a1b2c4d5e6f70", "op": "aten::softmax.int", "source": "candidate.cu",
      "status": "passed",
      "compile": {"ok": true, "architecture": "sm_90", "ms": 68.7, "from_cache": true, "cache_key": "ab12",
                  "kernels": [{"entry": "kf_softmax", "registers": 40, "barriers": 1, "shared_bytes": 1024,
                               "dynamic_shared_bytes": 0, "stack_frame_bytes": 0, "spill_store_bytes": 8,
                               "spill_load_bytes": 8, "threads_per_block": 256,
                               "occupancy": {"blocks_per_sm": 6, "warps_per_sm": 48, "max_warps_per_sm": 64,
                                             "fraction": 0.75, "limited_by": "registers"}}],
                  "diagnostics": [{"file": "candidate.cu", "line": 3, "column": 7, "severity": "warning",
                                   "message": "variable \"y\" was declared but never referenced"}]},
      "plan": {"launches": []},
      "worker": {"pid": 4242, "gpu": {"gpu": "NVIDIA H200", "architecture": "sm_90", "sms": 132},
                 "restarts": 0, "start_ms": 900.0, "evaluate_ms": 310.0},
      "evaluation": {
        "card": "3f2a1b2c4d5e6f70", "status": "passed",
        "device": {"gpu": "NVIDIA H200", "compute_capability": "9.0"},
        "checks": [{"name": "sample call-3: output 0", "passed": true, "detail": "max abs error 0"},
                   {"name": "sample call-3: determinism", "passed": true, "detail": "two runs bit-identical"},
                   {"name": "fresh input set 1: output 0", "passed": true, "detail": "max abs error 1e-7"}],
        "validated_input_sets": 4,
        "timing": {"method": "cupti kernel activity, L2 flushed",
                   "candidate": {"median_us": 15.98, "q1_us": 15.9, "q3_us": 16.1, "repetitions": 50},
                   "eager": {"median_us": 16.32, "q1_us": 16.2, "q3_us": 16.5, "repetitions": 50},
                   "candidate_warm_l2": {"median_us": 12.0, "q1_us": 11.9, "q3_us": 12.2, "repetitions": 20},
                   "eager_warm_l2": {"median_us": 13.0, "q1_us": 12.9, "q3_us": 13.1, "repetitions": 20},
                   "speedup": 1.021, "speedup_q1": 1.01, "speedup_q3": 1.03, "speedup_of_medians": 1.0213},
        "bandwidth": {"bytes": 4194304, "achieved_gb_per_s": 262.5, "device_copy_gb_per_s": 3900.0,
                      "fraction_of_copy": 0.067},
        "device_memory": {"allocated_bytes": 1, "reserved_bytes": 2, "device_used_bytes": 3}},
      "sanitizer": {"checked": true, "tool": "/usr/local/cuda/bin/compute-sanitizer", "passed": true,
                    "tools": {"memcheck": {"errors": 0, "evaluation": "passed", "log": "========= ERROR SUMMARY: 0 errors"},
                              "racecheck": {"errors": 0, "evaluation": "passed", "log": ""},
                              "synccheck": {"evaluation": "skipped", "skipped": "no barrier in the PTX"}}},
      "wall_ms": 1300.5
    })");
}

TEST(EvaluationReport, AFullReportIsTypedFieldByField)
{
    const EvaluationReport r = EvaluationReport::fromJson(fullReport());
    EXPECT_EQ(r.status, "passed");
    EXPECT_TRUE(r.reason.line.empty());
    ASSERT_TRUE(r.compile.has_value());
    EXPECT_TRUE(r.compile->ok);
    EXPECT_EQ(r.compile->architecture, "sm_90");
    EXPECT_EQ(r.compile->ms, 68.7);
    EXPECT_TRUE(r.compile->fromCache);
    EXPECT_EQ(r.compile->warnings, 1);
    EXPECT_EQ(r.compile->errors, 0);
    ASSERT_EQ(r.compile->diagnostics.size(), 1u);
    EXPECT_EQ(r.compile->diagnostics[0].line, 3);
    EXPECT_EQ(r.compile->diagnostics[0].column, 7);
    ASSERT_EQ(r.compile->kernels.size(), 1u);
    const KernelResourceUse& k = r.compile->kernels[0];
    EXPECT_EQ(k.entry, "kf_softmax");
    EXPECT_EQ(k.registers, 40);
    EXPECT_EQ(k.sharedBytes, 1024);
    EXPECT_EQ(k.spillStoreBytes, 8);
    EXPECT_EQ(k.threadsPerBlock, 256);
    EXPECT_EQ(k.occupancy, 0.75);
    EXPECT_EQ(k.warpsPerSm, 48);
    EXPECT_EQ(k.maxWarpsPerSm, 64);
    EXPECT_EQ(k.occupancyLimitedBy, "registers");

    ASSERT_TRUE(r.validation.has_value());
    EXPECT_EQ(r.validation->status, "passed");
    EXPECT_EQ(r.validation->inputSets, 4);
    ASSERT_EQ(r.validation->checks.size(), 3u);
    EXPECT_EQ(r.validation->checks[1].inputSet, "sample call-3");
    EXPECT_EQ(r.validation->checks[1].check, "determinism");
    EXPECT_EQ(r.validation->checks[2].inputSet, "fresh input set 1");
    EXPECT_EQ(r.validation->checks[2].detail, "max abs error 1e-7");
    EXPECT_TRUE(r.validation->checks[2].passed);
    EXPECT_FALSE(r.validation->failure.has_value());
    EXPECT_EQ(r.validation->device.value("compute_capability", ""), "9.0");

    ASSERT_TRUE(r.timing.has_value());
    EXPECT_EQ(r.timing->method, "cupti kernel activity, L2 flushed");
    EXPECT_EQ(r.timing->candidate, (LatencyStats{15.98, 15.9, 16.1}));
    EXPECT_EQ(r.timing->eager, (LatencyStats{16.32, 16.2, 16.5}));
    EXPECT_EQ(r.timing->candidateWarmL2, (LatencyStats{12.0, 11.9, 12.2}));
    EXPECT_EQ(r.timing->repetitions, 50);
    EXPECT_EQ(r.timing->pairedSpeedup, 1.021);
    EXPECT_EQ(r.timing->pairedSpeedupQ1, 1.01);
    EXPECT_EQ(r.timing->pairedSpeedupQ3, 1.03);
    EXPECT_EQ(r.timing->speedupOfMedians, 1.0213);
    ASSERT_TRUE(r.bandwidth.has_value());
    EXPECT_EQ(r.bandwidth->bytes, 4194304);
    EXPECT_EQ(r.bandwidth->fractionOfCopy, 0.067);

    ASSERT_TRUE(r.sanitizer.has_value());
    EXPECT_TRUE(r.sanitizer->checked);
    EXPECT_EQ(r.sanitizer->passed, true);
    ASSERT_EQ(r.sanitizer->tools.size(), 3u);
    EXPECT_EQ(r.sanitizer->tools[0].tool, "memcheck");
    EXPECT_EQ(r.sanitizer->tools[0].errors, 0);
    EXPECT_TRUE(r.sanitizer->tools[0].skipped.empty());
    EXPECT_EQ(r.sanitizer->tools[2].tool, "synccheck");
    EXPECT_EQ(r.sanitizer->tools[2].skipped, "no barrier in the PTX");
    EXPECT_FALSE(r.sanitizer->tools[2].errors.has_value());
    EXPECT_EQ(r.gpuModel, "NVIDIA H200");
    // The document is kept whole: fields the type does not name (wall_ms, device_memory) included.
    EXPECT_EQ(r.document(), fullReport());
}

TEST(EvaluationReport, AReportOfAnEarlierVersionReadsWithItsFieldsAbsent)
{
    // A tree written before the paired speedup's spread, the warm-L2 timings and the sanitizer.
    const json old = json::parse(R"({"status": "passed",
        "compile": {"ok": true, "architecture": "sm_90", "diagnostics": []},
        "evaluation": {"status": "passed", "timing": {"candidate": {"median_us": 10.0}, "eager": {"median_us": 20.0},
                       "speedup": 1.9}}})");
    const EvaluationReport r = EvaluationReport::fromJson(old);
    ASSERT_TRUE(r.timing.has_value());
    EXPECT_EQ(r.timing->candidate, (LatencyStats{10.0, 10.0, 10.0})); // no quartiles: the median
    EXPECT_EQ(r.timing->pairedSpeedup, 1.9);
    EXPECT_FALSE(r.timing->pairedSpeedupQ1.has_value());
    EXPECT_FALSE(r.timing->candidateWarmL2.has_value());
    EXPECT_FALSE(r.timing->repetitions.has_value());
    EXPECT_FALSE(r.compile->ms.has_value());
    EXPECT_TRUE(r.compile->kernels.empty());
    EXPECT_FALSE(r.sanitizer.has_value());
    EXPECT_FALSE(r.bandwidth.has_value());
    EXPECT_TRUE(r.validation->checks.empty());
    EXPECT_EQ(r.gpuModel, "");

    // A synthetic evaluator's details and an empty object: an empty report.
    const EvaluationReport synthetic = EvaluationReport::fromJson({{"log", "full compiler log"}});
    EXPECT_EQ(synthetic.status, "");
    EXPECT_FALSE(synthetic.compile || synthetic.validation || synthetic.timing || synthetic.sanitizer);
    EXPECT_EQ(synthetic.document(), (json{{"log", "full compiler log"}}));
    EXPECT_EQ(EvaluationReport::fromJson(json::object()), EvaluationReport());
}

TEST(EvaluationReport, GarbageNeverThrows)
{
    // Wrong types at every level, a non-finite number, an out-of-range integer, a zero speedup.
    const json mistyped = json::parse(R"({"status": 7, "reason": ["a"], "compile": "yes",
        "worker": {"gpu": "NVIDIA H200"},
        "evaluation": {"status": null, "checks": {"not": "an array"}, "validated_input_sets": -3,
                       "failure": "x",
                       "timing": {"candidate": {"median_us": "fast"}, "eager": [], "speedup": 0,
                                  "speedup_q1": "x"},
                       "bandwidth": {"bytes": 1.5}},
        "sanitizer": {"checked": "yes", "tools": {"memcheck": 3, "racecheck": {"errors": 1e30}}}})");
    EvaluationReport r;
    EXPECT_NO_THROW(r = EvaluationReport::fromJson(mistyped));
    EXPECT_EQ(r.status, "");
    EXPECT_TRUE(r.reason.line.empty());
    EXPECT_FALSE(r.compile.has_value());
    ASSERT_TRUE(r.validation.has_value());
    EXPECT_TRUE(r.validation->checks.empty());
    EXPECT_FALSE(r.validation->inputSets.has_value());
    EXPECT_FALSE(r.validation->failure.has_value());
    ASSERT_TRUE(r.timing.has_value());
    EXPECT_FALSE(r.timing->candidate.has_value());
    EXPECT_FALSE(r.timing->eager.has_value());
    EXPECT_FALSE(r.timing->pairedSpeedup.has_value());
    EXPECT_FALSE(r.bandwidth->bytes.has_value());
    EXPECT_FALSE(r.sanitizer->checked);
    ASSERT_EQ(r.sanitizer->tools.size(), 2u);
    EXPECT_FALSE(r.sanitizer->tools[1].errors.has_value());
    EXPECT_EQ(r.gpuModel, "");

    json nan = fullReport();
    nan["evaluation"]["timing"]["speedup"] = std::numeric_limits<double>::quiet_NaN();
    EXPECT_FALSE(EvaluationReport::fromJson(nan).timing->pairedSpeedup.has_value());

    // Not an object at all: an empty report, whatever it is.
    for (const json& value : {json(nullptr), json(42), json("report"), json::array({1, 2}), json(true)}) {
        EvaluationReport garbage;
        EXPECT_NO_THROW(garbage = EvaluationReport::fromJson(value)) << value.dump();
        EXPECT_EQ(garbage, EvaluationReport()) << value.dump();
    }
    // Deep nesting where a report is expected.
    json deep = json::object();
    for (int i = 0; i < 200; ++i)
        deep = json{{"evaluation", deep}};
    EXPECT_NO_THROW(EvaluationReport::fromJson(deep));
}

// A worker's HandlerError reason as an earlier build stored it: the exception's whole what().
std::string reasonWithC10Trace()
{
    return test::c10ErrorText("evaluate: handler of 'evaluate' threw: " + test::kC10OutOfMemory, 30) +
        " [handler-exception]";
}

TEST(EvaluationReport, AReasonWithATraceIsOneLineOnTheNodeAndInTheFile)
{
    // Recorded now: the reason on the node is one line.
    SearchTree tree("card", 1);
    ASSERT_TRUE(tree.addRoot({"k", json::object()}, {}, 0).ok());
    Evaluation crashed;
    crashed.status = NodeStatus::FailedValidation;
    crashed.failureReason = "failed: " + reasonWithC10Trace();
    crashed.report = EvaluationReport::fromJson({{"status", "failed"}, {"reason", reasonWithC10Trace()}});
    ASSERT_TRUE(tree.recordEvaluation("n0", crashed).ok());
    const SearchNode& node = *tree.root();
    EXPECT_TRUE(isOneLine(node.failureReason)) << node.failureReason;
    EXPECT_EQ(node.failureReason.find("frame #"), std::string::npos);
    EXPECT_NE(node.failureReason.find("CUDA out of memory"), std::string::npos);
    EXPECT_TRUE(isOneLine(node.evaluation.reason.line));
    EXPECT_EQ(node.evaluation.reason.detail.find("frame #"), std::string::npos);

    ScratchDir dir;
    const TreeStore store(dir.path() / "tree.json");
    ASSERT_TRUE(store.save(tree).ok());
    std::stringstream file;
    file << std::ifstream(store.file()).rdbuf();
    EXPECT_EQ(file.str().find("Exception raised from"), std::string::npos);
    EXPECT_EQ(file.str().find("frame #"), std::string::npos);

    // Written by an earlier build: the trace is in the stored report and reads as one line; the
    // next save writes the reduced reason.
    json old = toJson(tree);
    old["nodes"][0]["evaluation_details"]["reason"] = reasonWithC10Trace();
    old["nodes"][0]["failure_reason"] = "failed: evaluate: handler of 'evaluate' threw: CUDA out of memory.";
    auto loaded = searchTreeFromJson(old, "tree.json");
    ASSERT_TRUE(loaded.ok()) << loaded.error().toString();
    EXPECT_EQ(loaded->root()->evaluation.reason.line,
              "evaluate: handler of 'evaluate' threw: " + test::kC10OutOfMemory);
    EXPECT_EQ(toJson(loaded.value()).dump().find("frame #"), std::string::npos);

    // A failure_reason of more than one line (a file from elsewhere) reads as one line too.
    old["nodes"][0]["failure_reason"] = "first\nsecond";
    EXPECT_EQ(searchTreeFromJson(old, "tree.json")->root()->failureReason, "first");
}

} // namespace
} // namespace kforge::core
