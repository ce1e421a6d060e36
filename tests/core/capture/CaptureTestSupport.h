#pragma once
// Shared helpers for tests that capture the models made by tests/models/make_test_models.py.

#include "ScratchDir.h"

#include "capture/CaptureJob.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace kforge::core::test {

inline std::filesystem::path modelPath(const std::string& name)
{
    return std::filesystem::path(KFORGE_TEST_MODELS_DIR) / name;
}

inline CaptureOptions captureOn(const std::string& device, const std::string& model, std::vector<std::string> inputs,
                                const std::filesystem::path& out)
{
    CaptureOptions options;
    options.modelPath = modelPath(model);
    options.inputs = std::move(inputs);
    options.outputDir = out;
    options.device = device;
    return options;
}

inline CaptureOptions cpuCapture(const std::string& model, std::vector<std::string> inputs,
                                 const std::filesystem::path& out)
{
    return captureOn("cpu", model, std::move(inputs), out);
}

} // namespace kforge::core::test
