// The .cast reader's bounds (docs/cast-format.md, "Limits"): hostile packages
// are refused with one line naming the package and the limit, quickly, within a
// fixed memory budget, and with entry names escaped. Each reader run that could
// take much memory or overflow its stack runs in a child process with a bounded
// address space (BoundedRun.h).

#include "BoundedRun.h"
#include "CastTestSupport.h"

#include "cast/CastReader.h"
#include "cast/CastWriter.h"
#include "util/AtomicFile.h"
#include "util/Sha256.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <unistd.h>

namespace kforge::core {
namespace {

using test::BoundedRunResult;
using test::entriesOf;
using test::runBounded;
using test::samplePackage;

constexpr std::uint64_t kMiB = 1ull << 20;

struct Parts {
    nlohmann::json header;
    std::vector<ZipEntry> entries; // between HEADER.json and checksums.sha256
};

Parts goodParts()
{
    auto archive = CastWriter::build(samplePackage());
    EXPECT_TRUE(archive.ok());
    std::vector<ZipEntry> all = entriesOf(archive.value());
    Parts parts;
    parts.header = nlohmann::json::parse(all.front().data);
    parts.entries.assign(all.begin() + 1, all.end() - 1);
    return parts;
}

ZipEntry& entry(std::vector<ZipEntry>& entries, const std::string& name)
{
    for (ZipEntry& e : entries) {
        if (e.name == name)
            return e;
    }
    ADD_FAILURE() << "no entry " << name;
    return entries.front();
}

class CastLimits_ : public ::testing::Test {
protected:
    void SetUp() override
    {
        m_dir = std::filesystem::temp_directory_path() / ("kforge_cast_limits_" + std::to_string(::getpid()));
        std::filesystem::create_directories(m_dir);
    }
    void TearDown() override { std::filesystem::remove_all(m_dir); }

    /// Writes `archive` to a file and opens it in a child allowed the file's
    /// size plus `budget` bytes of memory; the child answers with the error line
    /// (or "accepted").
    BoundedRunResult openBounded(const std::string& archive, std::uint64_t budget)
    {
        const auto path = m_dir / "hostile.cast";
        EXPECT_TRUE(writeFileAtomically(path, archive).ok());
        const std::uint64_t size = archive.size();
        return runBounded(
            [path] {
                auto package = openCast(path);
                return package.ok() ? std::string("accepted") : package.error().toString();
            },
            size + budget);
    }

    std::filesystem::path m_dir;
};

// The case: a valid package whose manifest carries a 100 MB field the
// reader ignores took 4.1 GB to verify. Refused from the central directory
// before the manifest is hashed or parsed, with the file and a little more.
TEST_F(CastLimits_, HugeIgnoredManifestFieldIsRefusedWithinAFixedBudget)
{
    Parts parts = goodParts();
    auto manifest = nlohmann::json::parse(entry(parts.entries, "manifest.json").data);
    manifest["padding"] = std::string(100 * kMiB, 'x');
    entry(parts.entries, "manifest.json").data = manifest.dump();
    manifest = nullptr;
    std::string archive = CastWriter::seal(parts.header, parts.entries);
    parts.entries.clear();
    const BoundedRunResult run = openBounded(archive, 64 * kMiB);
    ASSERT_TRUE(run.exited) << run.describe();
    EXPECT_NE(run.answer.find("hostile.cast: entry 'manifest.json' is "), std::string::npos) << run.answer;
    EXPECT_NE(run.answer.find(" bytes, over the limit of 16777216 bytes for "
                              "this entry"),
              std::string::npos)
        << run.answer;
    EXPECT_EQ(run.answer.find('\n'), std::string::npos);
}

// A manifest under the size limit made of the values that cost most once
// parsed (an empty object: 3 bytes of text, ~100 bytes in memory) is refused
// by the value count before a value is built.
TEST_F(CastLimits_, ManyValuesAreRefusedBeforeTheyAreBuilt)
{
    Parts parts = goodParts();
    std::string text = nlohmann::json::parse(entry(parts.entries, "manifest.json").data).dump();
    text.pop_back(); // the closing brace
    text += ",\"padding\":[";
    while (text.size() < 16 * kMiB - 8)
        text += "{},";
    text += "{}]}";
    ASSERT_LE(text.size(), 16 * kMiB);
    entry(parts.entries, "manifest.json").data = std::move(text);
    const BoundedRunResult run = openBounded(CastWriter::seal(parts.header, parts.entries), 64 * kMiB);
    ASSERT_TRUE(run.exited) << run.describe();
    EXPECT_EQ(run.answer, (m_dir / "hostile.cast").string() + ": manifest.json: more than 1000000 values");
}

// Just under the value limit, the same manifest is read within a fixed budget
// (the file and 200 MiB).
TEST_F(CastLimits_, ManifestAtTheValueLimitParsesWithinAFixedBudget)
{
    Parts parts = goodParts();
    std::string text = nlohmann::json::parse(entry(parts.entries, "manifest.json").data).dump();
    text.pop_back();
    text += ",\"padding\":[";
    for (int i = 0; i < 990000; ++i)
        text += "{},";
    text += "{}]}";
    entry(parts.entries, "manifest.json").data = std::move(text);
    const BoundedRunResult run = openBounded(CastWriter::seal(parts.header, parts.entries), 200 * kMiB);
    ASSERT_TRUE(run.exited) << run.describe();
    EXPECT_EQ(run.answer, "accepted");
}

// The case: 200k kernels took 22 s before the count check refused
// them. HEADER.json's count is checked before the manifest is hashed or read.
TEST_F(CastLimits_, TwoHundredThousandKernelsAreRefusedBeforeTheManifest)
{
    Parts parts = goodParts();
    auto manifest = nlohmann::json::parse(entry(parts.entries, "manifest.json").data);
    // The text is spliced rather than built as JSON values: building 200000
    // of them would be most of the test's time.
    nlohmann::json fallback = manifest["kernels"][2];
    fallback["id"] = "ID";
    const std::string kernel = fallback.dump();
    const auto idAt = kernel.find("\"ID\"");
    std::string kernels = "[";
    for (int i = 0; i < 200000; ++i) {
        kernels += i ? "," : "";
        kernels += kernel.substr(0, idAt) + "\"k" + std::to_string(i) + "\"" + kernel.substr(idAt + 4);
    }
    kernels += "]";
    manifest["kernels"] = "KERNELS";
    std::string text = manifest.dump();
    text.replace(text.find("\"KERNELS\""), 9, kernels);
    entry(parts.entries, "manifest.json").data = std::move(text);
    manifest = nullptr;
    parts.header["counts"]["kernels"] = 200000;
    parts.header["counts"]["fallback"] = 200000 - 2;
    CastLimits generous; // the manifest alone must not be what refuses it
    generous.maxManifestBytes = 1ull << 30;
    const std::string archive = CastWriter::seal(parts.header, parts.entries);
    const auto start = std::chrono::steady_clock::now();
    auto package = readCast(archive, "many.cast", generous);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ASSERT_FALSE(package.ok());
    EXPECT_EQ(package.error().toString(),
              "many.cast: HEADER.json.counts.kernels is 200000, over the limit "
              "of 4096 kernels");
    EXPECT_LT(seconds, 2.0);

    // With the default limits the manifest's size refuses it first.
    const BoundedRunResult run = openBounded(archive, 64 * kMiB);
    ASSERT_TRUE(run.exited) << run.describe();
    EXPECT_NE(run.answer.find("entry 'manifest.json' is "), std::string::npos) << run.answer;
}

// A manifest listing more kernels than HEADER.json declares is refused before
// any kernel is read, not after building all of them (a malformed kernel
// among the extra ones is never reached).
TEST_F(CastLimits_, KernelCountIsCheckedBeforeKernelsAreBuilt)
{
    Parts parts = goodParts();
    auto manifest = nlohmann::json::parse(entry(parts.entries, "manifest.json").data);
    const nlohmann::json fallback = manifest["kernels"][2];
    for (int i = 3; i < 3000; ++i) {
        nlohmann::json k = fallback;
        k["id"] = i == 5 ? "not an id!" : "k" + std::to_string(i);
        manifest["kernels"].push_back(std::move(k));
    }
    entry(parts.entries, "manifest.json").data = manifest.dump();
    auto package = readCast(CastWriter::seal(parts.header, parts.entries), "extra.cast");
    ASSERT_FALSE(package.ok());
    EXPECT_EQ(package.error().toString(),
              "extra.cast: HEADER.json.counts.kernels is 3 but the package has "
              "3000");
}

// Deep nesting in a free-form part of the manifest (the validation record is
// copied into the package, which recursed once per level and overflowed the
// stack): refused by the parse, in a child that would otherwise crash.
TEST_F(CastLimits_, DeeplyNestedManifestIsRefusedNotACrash)
{
    Parts parts = goodParts();
    auto manifest = nlohmann::json::parse(entry(parts.entries, "manifest.json").data);
    std::string text = manifest.dump();
    const std::string key = "\"validation\":{";
    const auto at = text.find(key);
    ASSERT_NE(at, std::string::npos);
    const std::size_t depth = 1000000;
    text.insert(at + key.size(), "\"deep\":" + std::string(depth, '[') + "0" + std::string(depth, ']') + ",");
    ASSERT_LT(text.size(), 4 * kMiB);
    entry(parts.entries, "manifest.json").data = text;
    const BoundedRunResult run = openBounded(CastWriter::seal(parts.header, parts.entries), 64 * kMiB);
    ASSERT_TRUE(run.exited) << run.describe();
    EXPECT_EQ(run.answer, (m_dir / "hostile.cast").string() + ": manifest.json: nested deeper than 64 levels");
}

// A ZIP bomb: an entry whose central directory claims far more bytes than the
// file holds, compressed or not. Refused from the declared sizes before any
// byte is copied or inflated; nothing is allocated in their proportion.
TEST_F(CastLimits_, ZipBombDeclaredSizesAreRefusedBeforeReading)
{
    const std::string good = CastWriter::build(samplePackage()).value();
    const auto patchModel = [&](std::uint16_t method, std::uint32_t compressed, std::uint32_t size) {
        std::string bad = good;
        for (std::size_t at = bad.find(std::string("PK\x01\x02", 4)); at != std::string::npos;
             at = bad.find(std::string("PK\x01\x02", 4), at + 1)) {
            if (bad.compare(at + 46, 8, "model.pt") != 0)
                continue;
            const auto put = [&](std::size_t where, std::uint64_t v, int bytes) {
                for (int i = 0; i < bytes; ++i)
                    bad[where + i] = static_cast<char>((v >> (8 * i)) & 0xFF);
            };
            put(at + 10, method, 2);
            put(at + 20, compressed, 4);
            put(at + 24, size, 4);
            return bad;
        }
        ADD_FAILURE() << "no model.pt";
        return bad;
    };
    // Deflated, 22 bytes claiming 4 GiB.
    BoundedRunResult run = openBounded(patchModel(8, 22, 0xFFFFFFFFu), 16 * kMiB);
    ASSERT_TRUE(run.exited) << run.describe();
    EXPECT_NE(run.answer.find("entry 'model.pt': declared size 4294967295 bytes "
                              "exceeds the per-entry limit of 536870912 bytes"),
              std::string::npos)
        << run.answer;
    // Deflated within the limit: no inflating at all.
    run = openBounded(patchModel(8, 22, 400 * kMiB), 16 * kMiB);
    ASSERT_TRUE(run.exited) << run.describe();
    EXPECT_NE(run.answer.find("entry 'model.pt': compression method 8 is not "
                              "supported"),
              std::string::npos)
        << run.answer;
    // Stored, claiming 400 MiB of a file of a few hundred bytes.
    run = openBounded(patchModel(0, 400 * kMiB, 400 * kMiB), 16 * kMiB);
    ASSERT_TRUE(run.exited) << run.describe();
    EXPECT_NE(run.answer.find("entry 'model.pt': "), std::string::npos) << run.answer;
    EXPECT_EQ(run.answer.find("accepted"), std::string::npos);
}

// The issue's case: a non-UTF-8 entry name was refused only as "not
// referenced", with its raw bytes in the error line. Now refused for what it
// is, and no error line carries a raw byte of the name.
TEST_F(CastLimits_, NonUtf8AndControlEntryNamesAreRefusedEscaped)
{
    const Parts parts = goodParts();
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"kernels/k0/\xff\xfe.bin", "entry 'kernels/k0/\\xff\\xfe.bin': entry name is not UTF-8"},
        {"kernels/\xc0\xaf/x", // an overlong '/'
         "entry 'kernels/\\xc0\\xaf/x': entry name is not UTF-8"},
        {"notes/\xc2\x9b"
         "31mred",
         "entry 'notes/\\xc2\\x9b31mred': control character in entry name"},
        {"notes/\x1b[31mred", "entry 'notes/\\x1b[31mred': control character in entry name"},
    };
    for (const auto& [name, expected] : cases) {
        std::vector<ZipEntry> entries = parts.entries;
        entries.push_back({name, "payload"});
        auto package = readCast(CastWriter::seal(parts.header, entries), "names.cast");
        ASSERT_FALSE(package.ok());
        const std::string line = package.error().toString();
        EXPECT_EQ(line, "names.cast: " + expected);
        for (char c : line)
            EXPECT_TRUE(static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7F) << line;
    }
}

// Names that only appear in checksums.sha256 (never a ZIP entry, so never
// checked as one) are escaped in the error line too.
TEST_F(CastLimits_, NamesFromChecksumsAreEscaped)
{
    std::vector<ZipEntry> all = entriesOf(CastWriter::build(samplePackage()).value());
    // Two lines name the same hostile "entry"; the chain is sealed again so that
    // the reader gets as far as reading the lines.
    std::string& checksums = all.back().data;
    const std::string hostile = "\x1b]0;owned\x07";
    for (const char* name : {"  audit.json\n", "  model.pt\n"}) {
        const auto at = checksums.find(name);
        ASSERT_NE(at, std::string::npos);
        checksums.replace(at + 2, std::string(name).size() - 3, hostile);
    }
    std::string& header = all.front().data;
    const auto digest = nlohmann::json::parse(header)["checksums_sha256"].get<std::string>();
    header.replace(header.find(digest), 64, Sha256::hex(checksums));
    auto package = readCast(buildStoredZip(all), "sums.cast");
    ASSERT_FALSE(package.ok());
    const std::string line = package.error().toString();
    EXPECT_EQ(line,
              "sums.cast: checksums.sha256: entry '\\x1b]0;owned\\x07' "
              "listed twice");
    EXPECT_EQ(line.find('\x1b'), std::string::npos) << line;
}

} // namespace
} // namespace kforge::core
