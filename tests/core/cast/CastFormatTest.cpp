// .cast writer/reader: round trip and every rejection case, on archives the
// tests build.

#include "CastTestSupport.h"

#include "cast/CastReader.h"
#include "cast/CastWriter.h"
#include "model/RegionChain.h"
#include "util/AtomicFile.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <unistd.h>

namespace kforge::core {
namespace {

using test::dataOffset;
using test::entriesOf;
using test::samplePackage;

std::string goodArchive()
{
    auto bytes = CastWriter::build(samplePackage());
    EXPECT_TRUE(bytes.ok()) << (bytes.ok() ? "" : bytes.error().toString());
    return bytes.ok() ? bytes.value() : std::string{};
}

/// The error line readCast() gives for `archive` (fails the test if it is
/// accepted).
std::string rejection(const std::string& archive, const CastLimits& limits = {})
{
    auto package = readCast(archive, "bad.cast", limits);
    EXPECT_FALSE(package.ok()) << "accepted a bad package";
    return package.ok() ? std::string{} : package.error().toString();
}

/// The good package's header JSON and its entries between HEADER.json and
/// checksums.sha256.
struct Parts {
    nlohmann::json header;
    std::vector<ZipEntry> entries;
};

Parts partsOf(const std::string& archive)
{
    std::vector<ZipEntry> all = entriesOf(archive);
    Parts parts;
    parts.header = nlohmann::json::parse(all.front().data);
    parts.entries.assign(all.begin() + 1, all.end() - 1);
    return parts;
}

ZipEntry* find(std::vector<ZipEntry>& entries, const std::string& name)
{
    for (ZipEntry& e : entries) {
        if (e.name == name)
            return &e;
    }
    ADD_FAILURE() << "no entry " << name;
    return nullptr;
}

TEST(CastFormat, RoundTripKeepsEveryField)
{
    const CastPackage written = samplePackage();
    const auto dir = std::filesystem::temp_directory_path() / ("kforge_cast_rt_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto path = dir / "model.cast";
    ASSERT_TRUE(CastWriter::write(written, path).ok());
    auto read = openCast(path);
    std::filesystem::remove_all(dir);
    ASSERT_TRUE(read.ok()) << read.error().toString();

    EXPECT_EQ(read->kernels, written.kernels);
    EXPECT_EQ(read->audit, written.audit);
    EXPECT_EQ(read->model, written.model);
    CastHeader expected = written.header;
    expected.kernelCount = 3;
    expected.customCount = 2;
    expected.fallbackCount = 1;
    // manifest, audit, model, 2 x (cubin, ptx, source), HEADER.json,
    // checksums.sha256
    expected.entryCount = 11;
    expected.modelIncluded = true;
    EXPECT_EQ(read->header.checksumsSha256.size(), 64u);
    expected.checksumsSha256 = read->header.checksumsSha256;
    EXPECT_EQ(read->header, expected);

    // A kernels-only package (no model) round-trips too, and the same contents
    // give the same bytes.
    CastPackage kernelsOnly = written;
    kernelsOnly.model.reset();
    auto bytes = CastWriter::build(kernelsOnly);
    ASSERT_TRUE(bytes.ok());
    EXPECT_EQ(bytes.value(), CastWriter::build(kernelsOnly).value());
    auto again = readCast(bytes.value(), "kernels-only.cast");
    ASSERT_TRUE(again.ok()) << again.error().toString();
    EXPECT_FALSE(again->model.has_value());
    EXPECT_FALSE(again->header.modelIncluded);
    EXPECT_EQ(again->kernels, written.kernels);
}

TEST(CastFormat, HeaderIsTheFirstEntryAndChecksumsTheLast)
{
    const auto entries = entriesOf(goodArchive());
    ASSERT_GE(entries.size(), 2u);
    EXPECT_EQ(entries.front().name, "HEADER.json");
    EXPECT_EQ(entries.back().name, "checksums.sha256");
    const auto header = nlohmann::json::parse(entries.front().data);
    EXPECT_EQ(header["format_version"], "1.1");
    EXPECT_EQ(header["counts"]["entries"], entries.size());
}

TEST(CastFormat, FlippedByteInAnyEntryNamesTheEntry)
{
    const std::string good = goodArchive();
    for (const ZipEntry& entry : entriesOf(good)) {
        if (entry.data.empty())
            continue;
        std::string bad = good;
        const std::size_t at = dataOffset(bad, entry.name) + entry.data.size() / 2;
        bad[at] = static_cast<char>(bad[at] ^ 0x01);
        const std::string line = rejection(bad);
        EXPECT_NE(line.find("'" + entry.name + "'"), std::string::npos) << line;
        EXPECT_NE(line.find("CRC-32 mismatch"), std::string::npos) << line;
    }
}

TEST(CastFormat, FlippedByteAnywhereIsRefused)
{
    const std::string good = goodArchive();
    for (std::size_t at = 0; at < good.size(); ++at) {
        std::string bad = good;
        bad[at] = static_cast<char>(bad[at] ^ 0x20);
        auto package = readCast(bad, "bad.cast");
        ASSERT_FALSE(package.ok()) << "a changed byte at offset " << at << " was accepted";
    }
}

TEST(CastFormat, ChangedEntryWithValidCrcFailsItsSha256)
{
    // Rewriting an entry and its CRC (a deliberate edit, not line noise) is
    // caught by the SHA-256s.
    const std::string good = goodArchive();
    for (const std::string name : {"kernels/k0/sm_90.cubin", "kernels/k1/kernel.ptx", "kernels/k0/kernel.cu",
                                   "manifest.json", "audit.json", "model.pt", "HEADER.json"}) {
        std::vector<ZipEntry> entries = entriesOf(good);
        ZipEntry* entry = find(entries, name);
        ASSERT_NE(entry, nullptr);
        if (name == "HEADER.json")
            entry->data.replace(entry->data.find("kforge 0.1.0"), 12, "kforge 0.1.1");
        else
            entry->data[entry->data.size() / 2] ^= 0x01;
        const std::string line = rejection(buildStoredZip(entries));
        EXPECT_NE(line.find("entry '" + name + "': SHA-256 mismatch"), std::string::npos) << line;
    }
    std::vector<ZipEntry> entries = entriesOf(good);
    entries.back().data[3] = entries.back().data[3] == 'a' ? 'b' : 'a';
    const std::string line = rejection(buildStoredZip(entries));
    EXPECT_NE(line.find("'checksums.sha256': SHA-256 does not match HEADER.json"), std::string::npos) << line;
}

TEST(CastFormat, TruncatedArchiveIsRefused)
{
    const std::string good = goodArchive();
    for (std::size_t keep : {std::size_t{0}, std::size_t{10}, good.size() / 2, good.size() - 1}) {
        const std::string line = rejection(good.substr(0, keep));
        EXPECT_NE(line.find("truncated"), std::string::npos) << keep << ": " << line;
    }
}

TEST(CastFormat, UnsafeEntryNamesAreRefused)
{
    const Parts parts = partsOf(goodArchive());
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"/abs", "absolute path"},       {"../x", "'..' path component"},  {"a/../../b", "'..' path component"},
        {"kernels\\k0\\x", "backslash"}, {"a//b", "empty path component"}, {"C:/x", "drive letter"},
    };
    for (const auto& [name, why] : cases) {
        std::vector<ZipEntry> entries = parts.entries;
        entries.push_back({name, "payload"});
        const std::string line = rejection(CastWriter::seal(parts.header, entries));
        // Error lines escape backslashes (and control and non-UTF-8 bytes).
        std::string shown;
        for (char c : name)
            shown += c == '\\' ? std::string("\\\\") : std::string(1, c);
        EXPECT_NE(line.find("entry '" + shown + "': " + why), std::string::npos) << line;
    }
}

TEST(CastFormat, DuplicateEntriesAreRefused)
{
    const Parts parts = partsOf(goodArchive());
    std::vector<ZipEntry> entries = parts.entries;
    entries.push_back(entries.front());
    const std::string line = rejection(CastWriter::seal(parts.header, entries));
    EXPECT_NE(line.find("entry '" + entries.front().name + "': duplicate entry"), std::string::npos) << line;
}

TEST(CastFormat, OversizedEntriesAreRefused)
{
    const std::string good = goodArchive();
    // Declared size: patch the central directory's uncompressed size of model.pt
    // to 600 MiB.
    std::string bad = good;
    std::size_t at = bad.find(std::string("PK\x01\x02", 4));
    bool patched = false;
    while (at != std::string::npos && at < bad.size()) {
        const std::size_t nameLength =
            static_cast<unsigned char>(bad[at + 28]) | (static_cast<unsigned char>(bad[at + 29]) << 8);
        if (bad.compare(at + 46, nameLength, "model.pt") == 0 && nameLength == 8) {
            const std::uint32_t huge = 600u << 20;
            for (int i = 0; i < 4; ++i)
                bad[at + 24 + i] = static_cast<char>((huge >> (8 * i)) & 0xFF);
            patched = true;
            break;
        }
        at = bad.find(std::string("PK\x01\x02", 4), at + 1);
    }
    ASSERT_TRUE(patched);
    std::string line = rejection(bad);
    EXPECT_NE(line.find("entry 'model.pt': declared size 629145600 bytes exceeds "
                        "the per-entry limit"),
              std::string::npos)
        << line;

    // Actual size over a (lowered) per-entry limit, and over the total limit.
    CastLimits small;
    small.maxEntryBytes = 16;
    line = rejection(good, small);
    EXPECT_NE(line.find("exceeds the per-entry limit of 16"), std::string::npos) << line;
    CastLimits smallTotal;
    smallTotal.maxTotalBytes = 1000;
    line = rejection(good, smallTotal);
    EXPECT_NE(line.find("entries total more than the limit of 1000 bytes"), std::string::npos) << line;
}

TEST(CastFormat, NewerMajorVersionIsRefusedOlderMinorAccepted)
{
    const Parts parts = partsOf(goodArchive());
    nlohmann::json header = parts.header;
    header["format_version"] = "2.0";
    std::string line = rejection(CastWriter::seal(header, parts.entries));
    EXPECT_NE(line.find("format version 2.0 is newer than this kforge reads (1.x)"), std::string::npos) << line;

    header["format_version"] = "1.7"; // a newer minor only adds optional fields
    auto package = readCast(CastWriter::seal(header, parts.entries), "minor.cast");
    ASSERT_TRUE(package.ok()) << package.error().toString();
    EXPECT_EQ(package->header.formatMinor, 7);
}

TEST(CastFormat, MalformedJsonNamesEntryAndByte)
{
    const Parts parts = partsOf(goodArchive());
    std::vector<ZipEntry> entries = parts.entries;
    find(entries, "manifest.json")->data = "{\"kernels\": [}";
    std::string line = rejection(CastWriter::seal(parts.header, entries));
    EXPECT_NE(line.find("manifest.json: malformed JSON at byte 14"), std::string::npos) << line;

    entries = parts.entries;
    find(entries, "audit.json")->data = "{\"ops\": [1,]";
    line = rejection(CastWriter::seal(parts.header, entries));
    EXPECT_NE(line.find("audit.json: malformed JSON at byte"), std::string::npos) << line;

    // A wrong type is one line naming the field.
    entries = parts.entries;
    auto manifest = nlohmann::json::parse(find(entries, "manifest.json")->data);
    manifest["kernels"][1]["speedup"] = "fast";
    find(entries, "manifest.json")->data = manifest.dump();
    line = rejection(CastWriter::seal(parts.header, entries));
    EXPECT_NE(line.find("manifest.json kernel k1.speedup: expected a number"), std::string::npos) << line;
}

TEST(CastFormat, ARegionKernelKeepsItsChain)
{
    CastPackage written = samplePackage();
    written.kernels[0].op = kRegionOp;
    written.kernels[0].overload = "";
    written.kernels[0].region = {{"members", nlohmann::json::array()}, {"outputs", nlohmann::json::array()}};
    auto bytes = CastWriter::build(written);
    ASSERT_TRUE(bytes.ok()) << bytes.error().toString();
    auto read = readCast(bytes.value(), "region.cast");
    ASSERT_TRUE(read.ok()) << read.error().toString();
    EXPECT_EQ(read->kernels[0].region, written.kernels[0].region);
    EXPECT_TRUE(read->kernels[1].region.is_null());

    // A region card without its chain, and a chain on an op card, are refused.
    const Parts parts = partsOf(bytes.value());
    for (const bool dropChain : {true, false}) {
        std::vector<ZipEntry> entries = parts.entries;
        auto manifest = nlohmann::json::parse(find(entries, "manifest.json")->data);
        if (dropChain)
            manifest["kernels"][0]["card"].erase("region");
        else
            manifest["kernels"][1]["card"]["region"] = nlohmann::json::object();
        find(entries, "manifest.json")->data = manifest.dump();
        const std::string line = rejection(CastWriter::seal(parts.header, entries));
        EXPECT_NE(line.find(std::string(dropChain ? "kernel k0" : "kernel k1") +
                            ".card: a kforge::region card has a \"region\" chain, and only it"),
                  std::string::npos)
            << line;
    }
}

TEST(CastFormat, ManifestInconsistenciesAreRefused)
{
    const Parts parts = partsOf(goodArchive());

    std::vector<ZipEntry> entries = parts.entries;
    std::erase_if(entries, [](const ZipEntry& e) { return e.name == "kernels/k0/sm_90.cubin"; });
    nlohmann::json header = parts.header;
    header["counts"]["entries"] = header["counts"]["entries"].get<int>() - 1;
    std::string line = rejection(CastWriter::seal(header, entries));
    EXPECT_NE(line.find("references entry 'kernels/k0/sm_90.cubin', which is missing"), std::string::npos) << line;

    entries = parts.entries;
    entries.push_back({"kernels/k9/sm_90.cubin", "stray"});
    line = rejection(CastWriter::seal(parts.header, entries));
    EXPECT_NE(line.find("entry 'kernels/k9/sm_90.cubin' is not referenced by the manifest"), std::string::npos) << line;

    header = parts.header;
    header["counts"]["kernels"] = 5;
    line = rejection(CastWriter::seal(header, parts.entries));
    EXPECT_NE(line.find("HEADER.json.counts.kernels is 5 but the package has 3"), std::string::npos) << line;

    header = parts.header;
    header["counts"]["entries"] = 12;
    line = rejection(CastWriter::seal(header, parts.entries));
    EXPECT_NE(line.find("HEADER.json.counts.entries is 12 but the package has 11"), std::string::npos) << line;

    // HEADER.json must come first.
    entries = entriesOf(goodArchive());
    std::swap(entries[0], entries[1]);
    line = rejection(buildStoredZip(entries));
    EXPECT_NE(line.find("the first entry must be HEADER.json"), std::string::npos) << line;
}

TEST(CastFormat, WriterRefusesWhatTheReaderWould)
{
    CastPackage p = samplePackage();
    p.kernels[1].id = "k0";
    auto bytes = CastWriter::build(p);
    ASSERT_FALSE(bytes.ok());
    EXPECT_NE(bytes.error().toString().find("kernel id 'k0' is used twice"), std::string::npos);

    p = samplePackage();
    p.kernels[0].id = "../evil";
    EXPECT_FALSE(CastWriter::build(p).ok());

    p = samplePackage();
    p.kernels[0].cubins["sm_80"] = "x"; // not in the header's architectures
    bytes = CastWriter::build(p);
    ASSERT_FALSE(bytes.ok());
    EXPECT_NE(bytes.error().toString().find("sm_80 is not listed"), std::string::npos);
}

TEST(CastFormat, CompatibilityNeedsCubinOrOlderPtx)
{
    CastPackage p = samplePackage();
    p.header.architectures = {"sm_80"};
    for (CastKernel& k : p.kernels) {
        if (k.kind != KernelKind::Custom)
            continue;
        k.cubins = {{"sm_80", "cubin for sm_80"}};
        k.ptx.reset();
        k.ptxArch.clear();
    }
    auto read = readCast(CastWriter::build(p).value(), "sm80.cast");
    ASSERT_TRUE(read.ok()) << read.error().toString();

    auto on90 = checkCompatibility(read.value(), "sm_90", "2.11.0", "12.8");
    ASSERT_FALSE(on90.ok());
    EXPECT_EQ(on90.error().toString(), "kernel k0 has no cubin for sm_90 and no PTX to JIT (it has sm_80)");
    auto on80 = checkCompatibility(read.value(), "sm_80", "2.11.0", "12.8");
    ASSERT_TRUE(on80.ok());
    EXPECT_TRUE(on80->empty());

    // With compute_80 PTX an sm_90 GPU can JIT it; compute_90 PTX cannot serve an
    // sm_86.
    p.kernels[0].ptx = ".version 8.0\n";
    p.kernels[0].ptxArch = "compute_80";
    p.kernels[1].ptx = ".version 8.0\n";
    p.kernels[1].ptxArch = "compute_80";
    read = readCast(CastWriter::build(p).value(), "sm80-ptx.cast");
    ASSERT_TRUE(read.ok()) << read.error().toString();
    on90 = checkCompatibility(read.value(), "sm_90", "", "");
    ASSERT_TRUE(on90.ok()) << on90.error().toString();
    ASSERT_EQ(on90->size(), 2u);
    EXPECT_NE(on90->front().find("kernel k0: no sm_90 cubin; the driver "
                                 "JIT-compiles its compute_80 PTX"),
              std::string::npos);

    const CastPackage sm90 = readCast(goodArchive(), "good.cast").value();
    EXPECT_FALSE(checkCompatibility(sm90, "sm_86", "", "").ok());
    auto oldTorch = checkCompatibility(sm90, "sm_90", "2.10.1", "12.8");
    ASSERT_FALSE(oldTorch.ok());
    EXPECT_EQ(oldTorch.error().toString(), "the package needs torch >= 2.11, this is 2.10.1");
    EXPECT_FALSE(checkCompatibility(sm90, "sm_90", "2.11.0+cu128", "12.4").ok());
    EXPECT_TRUE(checkCompatibility(sm90, "sm_90", "2.11.0+cu128", "13.0").ok());
    EXPECT_FALSE(checkCompatibility(sm90, "gfx90a", "", "").ok());
}

TEST(CastFormat, VersionHelpers)
{
    EXPECT_EQ(parseFormatVersion("1.0"), (std::pair<int, int>{1, 0}));
    EXPECT_FALSE(parseFormatVersion("1").has_value());
    EXPECT_FALSE(parseFormatVersion("1.x").has_value());
    EXPECT_FALSE(parseFormatVersion("-1.0").has_value());
    EXPECT_LT(compareVersions("2.9", "2.11"), 0);
    EXPECT_EQ(compareVersions("2.11.0+cu128", "2.11"), 0);
    EXPECT_GT(compareVersions("13.0", "12.8"), 0);
}

} // namespace
} // namespace kforge::core
