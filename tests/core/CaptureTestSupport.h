#pragma once
// Shared helpers for tests that capture the models made by tests/models/make_test_models.py.

#include "capture/CaptureJob.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <unistd.h>

namespace kforge::core::test {

inline std::filesystem::path modelPath(const std::string& name)
{
    return std::filesystem::path(KFORGE_TEST_MODELS_DIR) / name;
}

/// A fresh, empty scratch folder for one test, removed by the destructor.
class ScratchDir {
public:
    /// Named after the running test; outside a test (suite set-up) pass a name.
    explicit ScratchDir(const std::string& name = {})
    {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        const std::string label =
            !name.empty() ? name
            : info        ? std::string(info->test_suite_name()) + "_" + info->name()
                          : std::string("scratch");
        m_path = std::filesystem::temp_directory_path() / ("kforge_" + label + "_" + std::to_string(::getpid()));
        std::filesystem::remove_all(m_path);
        std::filesystem::create_directories(m_path);
    }
    ~ScratchDir() { std::filesystem::remove_all(m_path); }
    const std::filesystem::path& path() const { return m_path; }
    std::filesystem::path operator/(const std::string& name) const { return m_path / name; }

    /// Names of everything in the folder (to check that nothing half-written is left behind).
    std::vector<std::string> entries() const
    {
        std::vector<std::string> names;
        for (const auto& entry : std::filesystem::directory_iterator(m_path))
            names.push_back(entry.path().filename().string());
        std::sort(names.begin(), names.end());
        return names;
    }

private:
    std::filesystem::path m_path;
};

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
