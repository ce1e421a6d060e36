// The trust engine on the GPU: a correct softmax candidate passes and is timed; wrong ones are each
// rejected with the right reason, by one engine whose worker survives hangs and faults.

#include "CaptureTestSupport.h"

#include "evaluation/CandidateBench.h"
#include "evaluation/SanitizerTool.h"
#include "util/AtomicFile.h"

using namespace kforge::core;
using kforge::core::test::modelPath;
using kforge::core::test::ScratchDir;
using nlohmann::json;

namespace {

class EvaluateGpuTest : public ::testing::Test {
protected:
    static void SetUpTestSuite()
    {
        s_scratch = new ScratchDir("EvaluateGpuTest");
        CaptureOptions options;
        options.modelPath = modelPath("softmax_only.pt");
        options.inputs = {"64x1000:bfloat16"};
        options.outputDir = s_scratch->path() / "project";
        options.device = "cuda";
        options.samplesPerCard = 1;
        auto report = runCapture(options);
        ASSERT_TRUE(report.ok()) << report.error().toString();
        ASSERT_EQ(report->project.cards.size(), 1u);
        s_card = new OperatorCard(report->project.cards.front());
        WorkerCommand command;
        command.executable = KFORGE_WORKER_PATH;
        s_worker = new WorkerClient(command);
        s_compiler = new CachingCompiler();
    }
    static void TearDownTestSuite()
    {
        delete s_worker;
        delete s_compiler;
        delete s_card;
        delete s_scratch;
    }

    static json bench(const std::string& kernelFile, int timeoutSeconds = 60, bool sanitize = false,
                      const std::filesystem::path& projectDir = {}, const OperatorCard* card = nullptr,
                      const json& evaluationOptions = json::object())
    {
        BenchRequest request;
        request.projectDir = projectDir.empty() ? s_scratch->path() / "project" : projectDir;
        request.card = card ? *card : *s_card;
        request.source = readWholeFile(std::string(KFORGE_GPU_KERNELS_DIR) + "/" + kernelFile).value();
        request.sourceName = kernelFile;
        request.evaluateTimeout = std::chrono::seconds(timeoutSeconds);
        request.sanitize = sanitize;
        request.evaluationOptions = evaluationOptions;
        auto report = benchCandidate(request, *s_compiler, *s_worker);
        EXPECT_TRUE(report.ok()) << report.error().toString();
        return report.ok() ? report.value() : json();
    }

    // Captures `model` on the GPU into a new project under the scratch dir; returns its cards.
    static std::vector<OperatorCard> captureProject(const std::string& model, const std::string& inputs,
                                                    const std::string& name, int samples)
    {
        CaptureOptions options;
        options.modelPath = modelPath(model);
        options.inputs = {inputs};
        options.outputDir = s_scratch->path() / name;
        options.device = "cuda";
        options.samplesPerCard = samples;
        auto report = runCapture(options);
        EXPECT_TRUE(report.ok()) << report.error().toString();
        return report.ok() ? report->project.cards : std::vector<OperatorCard>{};
    }

    static std::string reason(const json& report) { return report.value("reason", std::string()); }

    static inline ScratchDir* s_scratch = nullptr;
    static inline OperatorCard* s_card = nullptr;
    static inline WorkerClient* s_worker = nullptr;
    static inline CachingCompiler* s_compiler = nullptr;
};

} // namespace

TEST_F(EvaluateGpuTest, CorrectSoftmaxPassesAndIsTimedAgainstEager)
{
    const json report = bench("softmax_correct.cu");
    ASSERT_EQ(report.value("status", ""), "passed") << report.dump(2);
    const json& evaluation = report["evaluation"];
    EXPECT_EQ(evaluation["validated_input_sets"].get<int>(), 1 + 3); // one real sample, three fresh sets
    for (const json& check : evaluation["checks"])
        EXPECT_TRUE(check["passed"].get<bool>()) << check.dump();
    const json& timing = evaluation["timing"];
    EXPECT_GT(timing["candidate"]["median_us"].get<double>(), 0);
    EXPECT_GT(timing["eager"]["median_us"].get<double>(), 0);
    EXPECT_GE(timing["candidate"]["repetitions"].get<int>(), 50);
    EXPECT_GT(timing["speedup"].get<double>(), 0);
    EXPECT_EQ(timing["method"].get<std::string>(), "cupti kernel activity, L2 flushed") << timing.dump();
    ASSERT_TRUE(evaluation["bandwidth"].contains("fraction_of_copy")) << evaluation["bandwidth"].dump();
    EXPECT_GT(evaluation["bandwidth"]["fraction_of_copy"].get<double>(), 0);
    EXPECT_LT(evaluation["bandwidth"]["fraction_of_copy"].get<double>(), 1.10);
    EXPECT_EQ(report["compile"]["architecture"].get<std::string>(), "sm_90");
}

TEST_F(EvaluateGpuTest, SetsTooLargeToKeepAreMadeAgainWithTheSameValues)
{
    // A device budget of 0 bytes: only the timing sample stays on the device, each fresh set is
    // drawn again when validated. Its values are those the resident sets had: the same checks
    // with the same errors.
    const json kept = bench("softmax_correct.cu");
    const json transient = bench("softmax_correct.cu", 60, false, {}, nullptr, json{{"resident_bytes", 0}});
    ASSERT_EQ(kept.value("status", ""), "passed") << kept.dump(2);
    ASSERT_EQ(transient.value("status", ""), "passed") << transient.dump(2);
    EXPECT_TRUE(kept["evaluation"]["input_sets"]["resident"].get<bool>());
    EXPECT_FALSE(transient["evaluation"]["input_sets"]["resident"].get<bool>());
    EXPECT_EQ(transient["evaluation"]["validated_input_sets"].get<int>(), 1 + 3);
    EXPECT_EQ(transient["evaluation"]["checks"], kept["evaluation"]["checks"]);
    // 64x1000 bf16 in and out: one set is 256000 bytes; four kept sets held four times that.
    EXPECT_EQ(kept["evaluation"]["input_sets"]["set_bytes"].get<std::int64_t>(), 2 * 64 * 1000 * 2);
    const std::int64_t peakKept = kept["evaluation"]["device_memory"]["peak_allocated_bytes"].get<std::int64_t>();
    EXPECT_GT(peakKept, 0);
    // A kernel that caches by pointer is still caught by sets made again.
    const json cached = bench("softmax_cached.cu", 60, false, {}, nullptr, json{{"resident_bytes", 0}});
    EXPECT_EQ(cached.value("status", ""), "failed") << cached.dump(2);
    EXPECT_NE(reason(cached).find("fresh input set 1: output 0"), std::string::npos) << reason(cached);
}

TEST_F(EvaluateGpuTest, ACandidateClearlySlowerThanTheBestIsTimedBriefly)
{
    // A search hands the evaluation its GPU model's best speedup: far above this kernel's, so its
    // timing stops after the first brackets; far below, and it is timed in full.
    const json full = bench("softmax_correct.cu");
    ASSERT_EQ(full.value("status", ""), "passed") << full.dump(2);
    const std::string gpu = full["worker"]["gpu"]["gpu"].get<std::string>();
    auto benchWithBest = [&](double best) {
        BenchRequest request;
        request.projectDir = s_scratch->path() / "project";
        request.card = *s_card;
        request.source = readWholeFile(std::string(KFORGE_GPU_KERNELS_DIR) + "/softmax_correct.cu").value();
        request.bestSpeedupByGpu = {{gpu, best}, {"another GPU", 0.001}};
        auto report = benchCandidate(request, *s_compiler, *s_worker);
        EXPECT_TRUE(report.ok()) << report.error().toString();
        return report.ok() ? report.value() : json();
    };
    const json stopped = benchWithBest(1000.0);
    ASSERT_EQ(stopped.value("status", ""), "passed") << stopped.dump(2);
    const json& timing = stopped["evaluation"]["timing"];
    ASSERT_TRUE(timing.contains("stopped_early")) << timing.dump();
    EXPECT_EQ(timing["stopped_early"]["after_repetitions"].get<int>(), 10);
    EXPECT_EQ(timing["candidate"]["repetitions"].get<int>(), 10);
    EXPECT_EQ(timing["eager"]["repetitions"].get<int>(), 10);
    EXPECT_EQ(timing["candidate_warm_l2"]["repetitions"].get<int>(), 3);
    EXPECT_GT(timing["speedup"].get<double>(), 0);
    const json timed = benchWithBest(0.001)["evaluation"]["timing"];
    EXPECT_FALSE(timed.contains("stopped_early")) << timed.dump();
    EXPECT_EQ(timed["candidate"]["repetitions"].get<int>(), 50);
    EXPECT_EQ(timed["candidate_warm_l2"]["repetitions"].get<int>(), 20);
}

TEST_F(EvaluateGpuTest, KernelThatSkipsOutputsIsRejected)
{
    const json report = bench("softmax_skips_last.cu");
    EXPECT_EQ(report.value("status", ""), "failed");
    EXPECT_NE(reason(report).find("output 0"), std::string::npos) << reason(report);
    EXPECT_NE(reason(report).find("NaN where eager has a number"), std::string::npos) << reason(report);
    EXPECT_NE(reason(report).find("[0,999]"), std::string::npos) << reason(report);
}

TEST_F(EvaluateGpuTest, OffByOneIsRejectedWithTheSizeOfTheError)
{
    const json report = bench("softmax_off_by_one.cu");
    EXPECT_EQ(report.value("status", ""), "failed");
    EXPECT_NE(reason(report).find("elements differ"), std::string::npos) << reason(report);
    EXPECT_NE(reason(report).find("max abs error"), std::string::npos) << reason(report);
}

TEST_F(EvaluateGpuTest, OutOfBoundsWriteIsCaughtByTheGuards)
{
    const json report = bench("softmax_out_of_bounds.cu");
    EXPECT_EQ(report.value("status", ""), "failed");
    EXPECT_NE(reason(report).find("bounds"), std::string::npos) << reason(report);
    EXPECT_NE(reason(report).find("past the end"), std::string::npos) << reason(report);
}

TEST_F(EvaluateGpuTest, CachedResultIsCaughtByFreshInputs)
{
    const json report = bench("softmax_cached.cu");
    EXPECT_EQ(report.value("status", ""), "failed");
    EXPECT_NE(reason(report).find("fresh input set 1: output 0"), std::string::npos) << reason(report);
}

TEST_F(EvaluateGpuTest, HangingKernelTimesOutAndTheNextCandidateRunsOnAFreshWorker)
{
    const int restartsBefore = s_worker->restartCount();
    const auto started = std::chrono::steady_clock::now();
    const json hung = bench("softmax_hangs.cu", 8);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    EXPECT_EQ(hung.value("status", ""), "timed-out") << hung.dump(2);
    EXPECT_NE(reason(hung).find("timed out"), std::string::npos) << reason(hung);
    EXPECT_LT(seconds, 8 + 10); // the watchdog limit plus start-up and kill
    const json after = bench("softmax_correct.cu");
    EXPECT_EQ(after.value("status", ""), "passed") << after.dump(2);
    EXPECT_EQ(s_worker->restartCount(), restartsBefore + 1);
}

TEST_F(EvaluateGpuTest, FaultingKernelKillsOnlyTheWorker)
{
    const json faulted = bench("softmax_faults.cu");
    EXPECT_EQ(faulted.value("status", ""), "crashed") << faulted.dump(2);
    EXPECT_NE(reason(faulted).find("illegal"), std::string::npos) << reason(faulted);
    const json after = bench("softmax_correct.cu");
    EXPECT_EQ(after.value("status", ""), "passed") << after.dump(2);
}

TEST_F(EvaluateGpuTest, CorrectSoftmaxIsCleanUnderEveryComputeSanitizerTool)
{
    if (findComputeSanitizer().empty())
        GTEST_SKIP() << "compute-sanitizer is not installed";
    const json report = bench("softmax_correct.cu", 60, true);
    ASSERT_EQ(report.value("status", ""), "passed") << report.dump(2);
    const json& sanitizer = report["sanitizer"];
    EXPECT_TRUE(sanitizer["checked"].get<bool>());
    EXPECT_TRUE(sanitizer["passed"].get<bool>()) << sanitizer.dump(2);
    for (const char* tool : {"memcheck", "racecheck", "initcheck", "synccheck"}) {
        ASSERT_TRUE(sanitizer["tools"].contains(tool)) << tool;
        EXPECT_EQ(sanitizer["tools"][tool]["errors"], 0) << tool << ": " << sanitizer["tools"][tool].dump(2);
    }
}

// A card without samples is said as such ("no-sample", compiled but not sent to the worker), not
// as a wrong result; the worker serves the next candidate.
TEST_F(EvaluateGpuTest, CardWithoutSamplesIsNoSampleAndTheWorkerCarriesOn)
{
    const std::vector<OperatorCard> cards = captureProject("softmax_only.pt", "64x1000:bfloat16", "no-samples", 0);
    ASSERT_EQ(cards.size(), 1u);
    ASSERT_TRUE(cards[0].samples.empty());
    const json report = bench("softmax_correct.cu", 60, false, s_scratch->path() / "no-samples", &cards[0]);
    EXPECT_EQ(report.value("status", ""), "no-sample") << report.dump(2);
    EXPECT_TRUE(report["compile"].value("ok", false)) << report.dump(2);
    EXPECT_NE(reason(report).find("no captured sample"), std::string::npos) << reason(report);
    const json after = bench("softmax_correct.cu");
    EXPECT_EQ(after.value("status", ""), "passed") << after.dump(2);
}

TEST_F(EvaluateGpuTest, InPlaceAddIsValidatedThroughItsWrittenArgument)
{
    const std::vector<OperatorCard> cards = captureProject("inplace_add.pt", "64x1000:float32", "inplace", 1);
    const OperatorCard* addInPlace = nullptr;
    for (const OperatorCard& card : cards)
        if (card.qualifiedName() == "aten::add_.Tensor")
            addInPlace = &card;
    ASSERT_NE(addInPlace, nullptr) << "no aten::add_.Tensor card captured";
    const std::filesystem::path project = s_scratch->path() / "inplace";

    const json good = bench("add_inplace_correct.cu", 60, false, project, addInPlace);
    ASSERT_EQ(good.value("status", ""), "passed") << good.dump(2);
    EXPECT_GT(good["evaluation"]["timing"]["eager"]["median_us"].get<double>(), 0);

    const json half = bench("add_inplace_skips_half.cu", 60, false, project, addInPlace);
    EXPECT_EQ(half.value("status", ""), "failed") << half.dump(2);
    EXPECT_NE(reason(half).find("output 0"), std::string::npos) << reason(half);
    EXPECT_NE(reason(half).find("[32,0]"), std::string::npos) << reason(half); // first element not updated

    // Timing ran eager's add_ many times, on copies: the cached inputs were not drifted by it.
    const json again = bench("add_inplace_correct.cu", 60, false, project, addInPlace);
    EXPECT_EQ(again.value("status", ""), "passed") << again.dump(2);
}

TEST_F(EvaluateGpuTest, RegionCandidateIsJudgedAgainstItsChainReplayed)
{
    const std::vector<OperatorCard> cards = captureProject("gelu_tanh_written_out.pt", "256x1024:float32", "gelu", 1);
    const OperatorCard* region = nullptr;
    for (const OperatorCard& card : cards)
        if (card.isRegion())
            region = &card;
    ASSERT_NE(region, nullptr) << "no region card captured";
    ASSERT_EQ(region->region->members.size(), 8u);
    ASSERT_EQ(region->samples.size(), 1u) << region->samplesNote;
    ASSERT_TRUE(region->eager.has_value()) << region->eagerNote;
    const std::filesystem::path project = s_scratch->path() / "gelu";

    const json good = bench("gelu_tanh_region_correct.cu", 60, false, project, region);
    ASSERT_EQ(good.value("status", ""), "passed") << good.dump(2);
    EXPECT_EQ(good["evaluation"]["validated_input_sets"].get<int>(), 1 + 3);
    const json& timing = good["evaluation"]["timing"];
    // Eager is the whole chain (8 kernels) run as eager runs it; one fused pass beats it clearly.
    EXPECT_GT(timing["eager"]["median_us"].get<double>(), 0);
    EXPECT_GT(timing["speedup"].get<double>(), 2.0) << timing.dump(2);

    const json wrong = bench("gelu_tanh_region_erf.cu", 60, false, project, region);
    EXPECT_EQ(wrong.value("status", ""), "failed") << wrong.dump(2);
    EXPECT_NE(reason(wrong).find("output 0"), std::string::npos) << reason(wrong);
}
