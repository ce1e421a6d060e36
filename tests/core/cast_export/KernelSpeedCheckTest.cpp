// The in-model check's timing decisions (core/cast_export/KernelSpeedCheck.h) on a simulated model: a base
// time plus each enabled kernel's effect, with seeded noise, so every outcome is reproducible.
#include "cast_export/KernelSpeedCheck.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

using namespace kforge::core;

namespace {

// A model of `baseMs` with every kernel off; each enabled kernel adds its delta (negative: it helps).
// Noise is uniform within +-noise (a fraction), drawn per measurement. Wall time only (GPU time 0,
// not measured) unless gpuDeltaMs is set: then the GPU time is gpuBaseMs plus those deltas, exact.
struct SimulatedModel {
    double baseMs = 10.0;
    std::map<std::string, double> deltaMs;
    double noise = 0.0;
    double gpuBaseMs = 8.0;
    std::map<std::string, double> gpuDeltaMs;
    std::mt19937 random{7};
    std::vector<std::set<std::string>> measured;

    Result<ModelTime> operator()(const std::set<std::string>& enabled)
    {
        measured.push_back(enabled);
        double ms = baseMs, gpuMs = gpuBaseMs;
        for (const std::string& id : enabled) {
            ms += deltaMs.at(id);
            gpuMs += gpuDeltaMs.empty() ? 0.0 : gpuDeltaMs.at(id);
        }
        std::uniform_real_distribution<double> jitter(-noise, noise);
        return ModelTime{ms * (1.0 + jitter(random)), gpuDeltaMs.empty() ? 0.0 : gpuMs};
    }
};

std::set<std::string> keys(const std::map<std::string, double>& deltas)
{
    std::set<std::string> ids;
    for (const auto& [id, delta] : deltas)
        ids.insert(id);
    return ids;
}

std::string reasonFor(const KernelSpeedCheck& check, const std::string& id)
{
    for (const DroppedKernel& dropped : check.dropped)
        if (dropped.kernelId == id)
            return dropped.reason;
    return "";
}

} // namespace

TEST(KernelSpeedCheck, KeepsKernelsThatHelpAndDropsOneThatSlowsTheModel)
{
    SimulatedModel model;
    model.deltaMs = {{"k0", -1.0}, {"k1", -0.5}, {"slow", +0.4}};
    model.noise = 0.002;
    auto check = checkKernelSpeed(keys(model.deltaMs), std::ref(model), {});
    ASSERT_TRUE(check.ok()) << check.error().toString();
    EXPECT_EQ(check->kept, (std::set<std::string>{"k0", "k1"}));
    ASSERT_EQ(check->dropped.size(), 1u);
    EXPECT_EQ(check->dropped[0].kernelId, "slow");
    EXPECT_EQ(check->dropped[0].reason.rfind("in-model check: the model ran ", 0), 0u) << check->dropped[0].reason;
    EXPECT_NE(check->dropped[0].reason.find("faster without it"), std::string::npos);
    // Step 4 compared the two kept kernels with none: 8.5 ms against 10 ms.
    EXPECT_EQ(check->comparedCount, 2u);
    EXPECT_NEAR(check->keptMs, 8.5, 0.1);
    EXPECT_NEAR(check->noneMs, 10.0, 0.1);
}

TEST(KernelSpeedCheck, DropsEveryKernelWhenTheyTogetherSlowTheModelBelowEachRemovalsNoise)
{
    // Twenty kernels that each cost 0.08 ms: removing any one saves 0.8%, under the 1% threshold,
    // but together they make the model 16% slower. Without step 4 all twenty would be kept.
    SimulatedModel model;
    for (int i = 0; i < 20; ++i)
        model.deltaMs["k" + std::to_string(i)] = 0.08;
    auto check = checkKernelSpeed(keys(model.deltaMs), std::ref(model), {});
    ASSERT_TRUE(check.ok()) << check.error().toString();
    EXPECT_TRUE(check->kept.empty());
    ASSERT_EQ(check->dropped.size(), 20u);
    EXPECT_EQ(reasonFor(*check, "k7"),
              "in-model check: the model ran 16.0% slower with the 20 kernels left than with none");
    EXPECT_EQ(check->comparedCount, 20u);
    EXPECT_NEAR(check->keptMs, 11.6, 1e-9);
    EXPECT_NEAR(check->noneMs, 10.0, 1e-9);
}

TEST(KernelSpeedCheck, NoiseWithinTheThresholdDropsNothing)
{
    // Kernels with no effect at all, timed with +-0.4% noise: nothing crosses 1%.
    SimulatedModel model;
    model.deltaMs = {{"a", 0.0}, {"b", 0.0}, {"c", 0.0}};
    model.noise = 0.004;
    auto check = checkKernelSpeed(keys(model.deltaMs), std::ref(model), {});
    ASSERT_TRUE(check.ok()) << check.error().toString();
    EXPECT_EQ(check->kept.size(), 3u);
    EXPECT_TRUE(check->dropped.empty());
}

TEST(KernelSpeedCheck, MeasurementsInterleaveTheConfigurations)
{
    SimulatedModel model;
    model.deltaMs = {{"a", -1.0}, {"b", -1.0}};
    KernelSpeedCheckOptions options;
    options.rounds = 2;
    auto check = checkKernelSpeed(keys(model.deltaMs), std::ref(model), options);
    ASSERT_TRUE(check.ok()) << check.error().toString();
    const std::set<std::string> both{"a", "b"}, onlyB{"b"}, onlyA{"a"}, none{};
    // warm-up, then per round: full, without a, without b; then per round: kept, none.
    const std::vector<std::set<std::string>> expected{both,  both, onlyB, onlyA, both, onlyB,
                                                      onlyA, both, none,  both,  none};
    EXPECT_EQ(model.measured, expected);
}

TEST(KernelSpeedCheck, ATimingErrorStopsTheCheck)
{
    int calls = 0;
    auto failing = [&calls](const std::set<std::string>&) -> Result<ModelTime> {
        if (++calls == 3)
            return makeError(ErrorCode::Internal, "the forward pass failed", "model");
        return ModelTime{5.0, 4.0};
    };
    auto check = checkKernelSpeed({"a", "b"}, failing, {});
    ASSERT_FALSE(check.ok());
    EXPECT_NE(check.error().toString().find("the forward pass failed"), std::string::npos);
}

TEST(KernelSpeedCheck, NoKernelsMeansNoMeasurement)
{
    SimulatedModel model;
    auto check = checkKernelSpeed({}, std::ref(model), {});
    ASSERT_TRUE(check.ok());
    EXPECT_TRUE(model.measured.empty());
    EXPECT_EQ(check->comparedCount, 0u);
}

TEST(KernelSpeedCheck, GpuTimeDecidesEachRemovalWhereEveryMeasurementHasOne)
{
    // A host-bound model: the wall time says nothing about the kernels (each "helps" or "hurts" by
    // +-8% of noise, beyond the 1% threshold), the GPU time says pool saves 0.3 ms and slow costs
    // 0.1 ms. Judged by wall time, pool (5x faster alone) could go on noise; by GPU time it stays.
    SimulatedModel model;
    model.deltaMs = {{"pool", 0.0}, {"bn", 0.0}, {"slow", 0.0}};
    model.noise = 0.08;
    model.gpuDeltaMs = {{"pool", -0.3}, {"bn", -0.2}, {"slow", +0.1}};
    model.random.seed(3);
    auto check = checkKernelSpeed(keys(model.deltaMs), std::ref(model), {});
    ASSERT_TRUE(check.ok()) << check.error().toString();
    // Step 4 by wall time could still drop the kept pair on this much noise; what this test asserts
    // is step 3: slow dropped by its GPU time, pool and bn not dropped by step 3.
    EXPECT_EQ(reasonFor(*check, "slow"), "in-model check: the model's GPU time was 1.3% lower without it");
    for (const std::string id : {"pool", "bn"})
        EXPECT_EQ(reasonFor(*check, id).find("without it"), std::string::npos) << reasonFor(*check, id);
}

TEST(KernelSpeedCheck, WallTimeDecidesWhenARoundLacksAGpuTime)
{
    SimulatedModel model;
    model.deltaMs = {{"k0", -1.0}, {"slow", +0.4}};
    model.gpuDeltaMs = {{"k0", +0.5}, {"slow", -0.5}}; // the clocks disagree on both kernels
    int call = 0;
    auto oneGpuTimeMissing = [&](const std::set<std::string>& on) -> Result<ModelTime> {
        auto time = model(on);
        if (++call == 3) // warm-up, round 1's full set, then its measurement without k0: not isolated
            time->gpuMs = 0;
        return time;
    };
    auto check = checkKernelSpeed(keys(model.deltaMs), oneGpuTimeMissing, {});
    ASSERT_TRUE(check.ok()) << check.error().toString();
    // k0's removals lack one GPU time: judged by wall time (it helps), kept; by GPU time it would
    // have gone. slow's removals all have GPU times: by GPU time (it helps), kept.
    EXPECT_EQ(check->kept, (std::set<std::string>{"k0", "slow"}));
}

TEST(KernelSpeedCheck, KernelsLeftAreDroppedWhenEitherClockSaysSlowerThanNone)
{
    {
        // The kernels save GPU time, but their launches cost the host more than they save: the wall
        // time (what the user waits for) is 5% slower with them.
        SimulatedModel model;
        model.deltaMs = {{"a", 0.25}, {"b", 0.25}};
        model.gpuDeltaMs = {{"a", -0.5}, {"b", -0.5}};
        KernelSpeedCheckOptions options;
        options.dropThreshold = 0.03; // step 3 keeps both (each costs 2.4% of wall time, GPU decides)
        auto check = checkKernelSpeed(keys(model.deltaMs), std::ref(model), options);
        ASSERT_TRUE(check.ok()) << check.error().toString();
        EXPECT_TRUE(check->kept.empty());
        EXPECT_EQ(reasonFor(*check, "a"),
                  "in-model check: the model ran 5.0% slower with the 2 kernels left than with none");
        EXPECT_NEAR(check->keptGpuMs, 7.0, 1e-9);
        EXPECT_NEAR(check->noneGpuMs, 8.0, 1e-9);
    }
    {
        // The wall time cannot tell (equal), the GPU time is 2.5% worse with the pair than with
        // none, though each removal alone stays under the 3% threshold.
        SimulatedModel model;
        model.deltaMs = {{"a", 0.0}, {"b", 0.0}};
        model.gpuDeltaMs = {{"a", 0.1}, {"b", 0.1}};
        KernelSpeedCheckOptions options;
        options.dropThreshold = 0.02;
        auto check = checkKernelSpeed(keys(model.deltaMs), std::ref(model), options);
        ASSERT_TRUE(check.ok()) << check.error().toString();
        EXPECT_TRUE(check->kept.empty());
        EXPECT_EQ(reasonFor(*check, "b"),
                  "in-model check: the model took 2.5% more GPU time with the 2 kernels left than with none");
    }
}

TEST(KernelSpeedCheck, AMeasurementOfAShortModelSpansSeveralPasses)
{
    const KernelSpeedCheckOptions options;             // at least 3 passes and 20 ms, at most 50 passes
    EXPECT_EQ(passesPerMeasurement(2.5, options), 8);  // a host-bound decoder layer: 8 x 2.5 ms
    EXPECT_EQ(passesPerMeasurement(11.0, options), 3); // long enough in the fewest passes
    EXPECT_EQ(passesPerMeasurement(0.1, options), 50); // tiny: capped
    EXPECT_EQ(passesPerMeasurement(0.0, options), 50); // a clock that did not move
}

TEST(MedianOf, OddEvenAndEmpty)
{
    EXPECT_EQ(medianOf({3.0, 1.0, 2.0}), 2.0);
    EXPECT_EQ(medianOf({4.0, 1.0, 3.0, 2.0}), 2.5);
    EXPECT_EQ(medianOf({}), 0.0);
}
