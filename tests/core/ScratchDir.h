#pragma once
// A fresh, empty temporary folder for one test, removed with everything in it at the end of scope.
// The one scratch-folder helper of the core tests (capture, search, kernel and the rest).

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <string>
#include <system_error>
#include <unistd.h>
#include <vector>

namespace kforge::core::test {

class ScratchDir {
public:
    /// Named after `tag`, else the running test (outside a test, e.g. in suite set-up, pass a tag);
    /// the process id and a counter keep folders of parallel test processes and of one test apart.
    explicit ScratchDir(const std::string& tag = {})
    {
        static std::atomic<int> counter{0};
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        const std::string label = !tag.empty() ? tag
            : info                             ? std::string(info->test_suite_name()) + "_" + info->name()
                                               : std::string("scratch");
        m_path = std::filesystem::temp_directory_path() /
            ("kforge-" + label + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
        std::filesystem::remove_all(m_path);
        std::filesystem::create_directories(m_path);
    }
    ~ScratchDir()
    {
        std::error_code ec; // a destructor must not throw
        std::filesystem::remove_all(m_path, ec);
    }
    ScratchDir(const ScratchDir&) = delete;
    ScratchDir& operator=(const ScratchDir&) = delete;

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

} // namespace kforge::core::test
