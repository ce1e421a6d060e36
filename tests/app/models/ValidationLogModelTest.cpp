// ValidationLogModel: structure under QAbstractItemModelTester; the entries a tree implies (compile
// errors with file:line, validation checks, timing summary, sanitizer findings, failure reasons,
// robustness to missing or mistyped report fields); batched appends; the cap dropping the oldest.

#include "models/ValidationLogModel.h"
#include "SearchTreeTestSupport.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QTest>

using kforge::app::LogEntry;
using kforge::app::LogLevel;
using kforge::app::LogPhase;
using kforge::app::ValidationLogModel;
namespace core = kforge::core;
namespace test = kforge::test;
using core::NodeStatus;
using nlohmann::json;

namespace {

json timingReport()
{
    return json{{"method", "cupti kernel activity, L2 flushed"},
                {"candidate", {{"median_us", 12.3}, {"q1_us", 12.1}, {"q3_us", 12.6}, {"repetitions", 50}}},
                {"eager", {{"median_us", 22.8}, {"q1_us", 22.5}, {"q3_us", 23.0}, {"repetitions", 50}}},
                {"speedup", 1.85},
                {"speedup_of_medians", 1.853}};
}

json compileOk()
{
    return json{
        {"ok", true}, {"architecture", "sm_90"}, {"ms", 68.7}, {"from_cache", false}, {"diagnostics", json::array()}};
}

// n0 root: passed, timed, not sanitizer-checked
// n1: compile error (one error with file:line:column, one warning, one location-less error)
// n2: failed validation (a passed and a failed check)
// n3: passed validation and timing, then a racecheck finding (the bench report says failed)
// n4: pending (no entries)
// n5: crashed, with a report whose fields have the wrong types
core::SearchTree logTree()
{
    core::SearchTree tree("card-a", 1);

    core::Evaluation root = test::passed(12.3, 22.8);
    root.report = core::EvaluationReport::fromJson(json{
        {"status", "passed"},
        {"compile", compileOk()},
        {"evaluation",
         {{"status", "passed"},
          {"checks",
           json::array({json{{"name", "sample call-0: output 0"}, {"passed", true}, {"detail", "max abs error 0"}}})},
          {"timing", timingReport()}}},
        {"sanitizer", {{"checked", false}, {"reason", "not requested (--sanitize)"}}}});
    test::addRoot(tree, root);

    core::Evaluation compileError =
        test::failed(NodeStatus::FailedCompile, "compile-error: candidate.cu:12:5: identifier \"x\" is undefined");
    compileError.report = core::EvaluationReport::fromJson(
        json{{"status", "compile-error"},
             {"reason", "candidate.cu:12:5: identifier \"x\" is undefined"},
             {"compile",
              {{"ok", false},
               {"architecture", "sm_90"},
               {"diagnostics",
                json::array({json{{"file", "candidate.cu"},
                                  {"line", 3},
                                  {"column", 0},
                                  {"severity", "warning"},
                                  {"message", "variable \"y\" was declared but never referenced"}},
                             json{{"file", "candidate.cu"},
                                  {"line", 12},
                                  {"column", 5},
                                  {"severity", "error"},
                                  {"message", "identifier \"x\" is undefined\n      x = 1;\n      ^"}},
                             json{{"file", ""},
                                  {"line", 0},
                                  {"column", 0},
                                  {"severity", "error"},
                                  {"message", "nvrtc: error: compilation failed"}}})}}}});
    test::addChild(tree, "n0", "vector-width-4", compileError);

    core::Evaluation wrong =
        test::failed(NodeStatus::FailedValidation, "failed: sample call-0: output 0: 3 of 1024 elements differ");
    wrong.report = core::EvaluationReport::fromJson(
        json{{"status", "failed"},
             {"compile", compileOk()},
             {"evaluation",
              {{"status", "failed"},
               {"checks",
                json::array({json{{"name", "sample call-0: launch"}, {"passed", true}},
                             json{{"name", "sample call-0: output 0"},
                                  {"passed", false},
                                  {"detail", "3 of 1024 elements differ; first at [0, 7]"}}})},
               {"failure", {{"check", "sample call-0: output 0"}, {"message", "3 of 1024 elements differ"}}}}}});
    test::addChild(tree, "n0", "unroll-2", wrong);

    core::Evaluation racy =
        test::failed(NodeStatus::FailedValidation, "failed: compute-sanitizer racecheck: 2 error(s)");
    racy.report = core::EvaluationReport::fromJson(
        json{{"status", "failed"},
             {"compile", compileOk()},
             {"evaluation", {{"status", "passed"}, {"timing", timingReport()}}},
             {"sanitizer",
              {{"checked", true},
               {"passed", false},
               {"tools",
                {{"memcheck", {{"errors", 0}, {"evaluation", "passed"}}},
                 {"racecheck",
                  {{"errors", 2},
                   {"evaluation", "passed"},
                   {"log",
                    "========= COMPUTE-SANITIZER\n========= Error: Race reported between Write access at k+0x90\n"
                    "=========     and Read access at k+0x120 [4 hazards]\n\n========= RACECHECK SUMMARY: 2 hazards\n"
                    "========= ERROR SUMMARY: 2 errors\n"}}},
                 // A tool that can find nothing in the candidate is not run (SanitizerScope.h).
                 {"synccheck", {{"evaluation", "skipped"}, {"skipped", "no barrier in the PTX"}}}}}}}});
    test::addChild(tree, "n0", "smem-tile", racy);

    test::addChild(tree, "n0", "block-256"); // pending

    core::Evaluation odd = test::failed(NodeStatus::Crashed, "crashed: worker died (signal 11)");
    odd.report = core::EvaluationReport::fromJson(
        json{{"status", 7},
             {"compile", "not an object"},
             {"evaluation", {{"checks", {{"not", "an array"}}}, {"timing", {{"candidate", {{"median_us", "x"}}}}}}},
             {"sanitizer", json::array()}});
    test::addChild(tree, "n0", "warp-reduce", odd);
    return tree;
}

QList<LogEntry> entriesOf(const QList<LogEntry>& entries, const QString& node)
{
    QList<LogEntry> out;
    for (const LogEntry& e : entries) {
        if (e.nodeId == node)
            out << e;
    }
    return out;
}

LogEntry entry(int k, LogLevel level = LogLevel::Info, const QString& node = QStringLiteral("n0"))
{
    return LogEntry{QDateTime::fromMSecsSinceEpoch(1700000000000 + k),
                    level,
                    QStringLiteral("card-a"),
                    node,
                    LogPhase::Validate,
                    QStringLiteral("entry %1").arg(k)};
}

QList<LogEntry> batch(int first, int count)
{
    QList<LogEntry> out;
    for (int k = first; k < first + count; ++k)
        out << entry(k);
    return out;
}

} // namespace

class ValidationLogModelTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void passedNodeGivesCompileChecksTimingAndSanitizer()
    {
        const QList<LogEntry> all = ValidationLogModel::entriesFromTree(logTree());
        const QList<LogEntry> n0 = entriesOf(all, QStringLiteral("n0"));
        QCOMPARE(n0.size(), 4);
        for (const LogEntry& e : n0) {
            QCOMPARE(e.cardId, QStringLiteral("card-a"));
            QCOMPARE(e.time, QDateTime::fromMSecsSinceEpoch(1700000000000));
            QCOMPARE(e.level, LogLevel::Info);
        }
        QCOMPARE(n0[0].phase, LogPhase::Compile);
        QCOMPARE(n0[0].message, QStringLiteral("compiled for sm_90 in 68.7 ms"));
        QCOMPARE(n0[1].phase, LogPhase::Validate);
        QCOMPARE(n0[1].message, QStringLiteral("sample call-0: output 0: passed: max abs error 0"));
        QCOMPARE(n0[2].phase, LogPhase::Time);
        QVERIFY2(n0[2].message.startsWith(QStringLiteral("12.3 \u00b5s, 1.85x eager (eager 22.8 \u00b5s; ")),
                 qPrintable(n0[2].message));
        QVERIFY(n0[2].message.contains(QStringLiteral("50 repetitions")));
        QVERIFY(n0[2].message.contains(QStringLiteral("cupti kernel activity, L2 flushed")));
        QCOMPARE(n0[3].phase, LogPhase::Sanitize);
        QCOMPARE(n0[3].message, QStringLiteral("not sanitizer-checked: not requested (--sanitize)"));
    }

    void kernelResourcesFollowTheCompileLine()
    {
        core::SearchTree tree("card-r", 1);
        core::Evaluation node = test::passed(12.3, 22.8);
        json compile = compileOk();
        compile["kernels"] = json::array({json{{"entry", "kf_stats"},
                                               {"registers", 64},
                                               {"shared_bytes", 1024},
                                               {"dynamic_shared_bytes", 0},
                                               {"spill_store_bytes", 0},
                                               {"spill_load_bytes", 0},
                                               {"threads_per_block", 256},
                                               {"occupancy",
                                                {{"blocks_per_sm", 4},
                                                 {"warps_per_sm", 32},
                                                 {"max_warps_per_sm", 64},
                                                 {"fraction", 0.5},
                                                 {"limited_by", "registers"}}}},
                                          json{{"entry", "kf_apply"},
                                               {"registers", 255},
                                               {"shared_bytes", 0},
                                               {"dynamic_shared_bytes", 4096},
                                               {"spill_store_bytes", 40},
                                               {"spill_load_bytes", 36},
                                               {"threads_per_block", 128}}});
        node.report = core::EvaluationReport::fromJson(json{{"status", "passed"}, {"compile", compile}});
        test::addRoot(tree, node);
        const QList<LogEntry> entries = entriesOf(ValidationLogModel::entriesFromTree(tree), QStringLiteral("n0"));
        QVERIFY(entries.size() >= 3);
        QCOMPARE(entries[1].phase, LogPhase::Compile);
        QCOMPARE(entries[1].level, LogLevel::Info);
        QCOMPARE(entries[1].message,
                 QStringLiteral("kf_stats: 64 registers/thread, 1024 B shared + 0 B dynamic per block of 256 threads, "
                                "no spills; theoretical occupancy 50% (32 of 64 warps per SM, limited by registers)"));
        QCOMPARE(entries[2].level, LogLevel::Warning); // spills
        QCOMPARE(entries[2].message,
                 QStringLiteral("kf_apply: 255 registers/thread, 0 B shared + 4096 B dynamic per block of 128 threads, "
                                "spills 40 B stored / 36 B loaded"));
    }

    void compileErrorNodeGivesDiagnosticsWithLocations()
    {
        const QList<LogEntry> n1 = entriesOf(ValidationLogModel::entriesFromTree(logTree()), QStringLiteral("n1"));
        QCOMPARE(n1.size(), 5);
        for (const LogEntry& e : n1)
            QCOMPARE(e.phase, LogPhase::Compile);
        QCOMPARE(n1[0].level, LogLevel::Error);
        QCOMPARE(n1[0].message, QStringLiteral("compile failed: 2 error(s)"));
        QCOMPARE(n1[1].level, LogLevel::Warning);
        QCOMPARE(n1[1].message, QStringLiteral("candidate.cu:3: variable \"y\" was declared but never referenced"));
        QCOMPARE(n1[2].level, LogLevel::Error);
        QCOMPARE(n1[2].message,
                 QStringLiteral("candidate.cu:12:5: identifier \"x\" is undefined\n      x = 1;\n      ^"));
        QCOMPARE(n1[3].message, QStringLiteral("nvrtc: error: compilation failed"));
        QCOMPARE(n1[4].level, LogLevel::Error);
        QCOMPARE(n1[4].message,
                 QStringLiteral("compile failed: compile-error: candidate.cu:12:5: identifier \"x\" is undefined"));

        // The table shows a multi-line message's first line; the tooltip and MessageRole all of it.
        ValidationLogModel model;
        model.appendEntries(n1);
        QCOMPARE(model.index(2, ValidationLogModel::MessageColumn).data().toString(),
                 QStringLiteral("candidate.cu:12:5: identifier \"x\" is undefined"));
        QCOMPARE(model.index(2, ValidationLogModel::MessageColumn).data(Qt::ToolTipRole).toString(), n1[2].message);
        QCOMPARE(model.index(2, ValidationLogModel::LevelColumn).data(ValidationLogModel::MessageRole).toString(),
                 n1[2].message);
    }

    void failedValidationNodeGivesChecksAndReason()
    {
        const QList<LogEntry> n2 = entriesOf(ValidationLogModel::entriesFromTree(logTree()), QStringLiteral("n2"));
        QCOMPARE(n2.size(), 4);
        QCOMPARE(n2[0].phase, LogPhase::Compile);
        QCOMPARE(n2[1].level, LogLevel::Info);
        QCOMPARE(n2[1].message, QStringLiteral("sample call-0: launch: passed"));
        QCOMPARE(n2[2].level, LogLevel::Error);
        QCOMPARE(n2[2].phase, LogPhase::Validate);
        QCOMPARE(n2[2].message,
                 QStringLiteral("sample call-0: output 0: failed: 3 of 1024 elements differ; first at [0, 7]"));
        QCOMPARE(n2[3].level, LogLevel::Error);
        QCOMPARE(n2[3].phase, LogPhase::Validate);
        QCOMPARE(n2[3].message,
                 QStringLiteral("wrong result: failed: sample call-0: output 0: 3 of 1024 elements differ"));
    }

    void sanitizerFindingIsAnError()
    {
        const QList<LogEntry> n3 = entriesOf(ValidationLogModel::entriesFromTree(logTree()), QStringLiteral("n3"));
        QCOMPARE(n3.size(), 6);
        QCOMPARE(n3[1].phase, LogPhase::Time);
        QVERIFY(n3[1].message.startsWith(QStringLiteral("12.3 \u00b5s, 1.85x eager")));
        QCOMPARE(n3[2].level, LogLevel::Info);
        QCOMPARE(n3[2].phase, LogPhase::Sanitize);
        QCOMPARE(n3[2].message, QStringLiteral("memcheck: clean"));
        QCOMPARE(n3[3].level, LogLevel::Error);
        QCOMPARE(n3[3].phase, LogPhase::Sanitize);
        QCOMPARE(n3[3].message,
                 QStringLiteral("racecheck: 2 error(s): Error: Race reported between Write access at "
                                "k+0x90\nand Read access at k+0x120 [4 hazards]\nRACECHECK SUMMARY: 2 hazards"));
        QCOMPARE(n3[4].level, LogLevel::Info);
        QCOMPARE(n3[4].phase, LogPhase::Sanitize);
        QCOMPARE(n3[4].message, QStringLiteral("synccheck: not run: no barrier in the PTX"));
        QCOMPARE(n3[5].level, LogLevel::Error);
        QCOMPARE(n3[5].phase, LogPhase::Sanitize); // the node failed at the sanitizer gate
        QCOMPARE(n3[5].message, QStringLiteral("wrong result: failed: compute-sanitizer racecheck: 2 error(s)"));
    }

    void pendingAndMalformedNodes()
    {
        const QList<LogEntry> all = ValidationLogModel::entriesFromTree(logTree());
        QVERIFY(entriesOf(all, QStringLiteral("n4")).isEmpty());
        const QList<LogEntry> n5 = entriesOf(all, QStringLiteral("n5"));
        QCOMPARE(n5.size(), 1);
        QCOMPARE(n5[0].level, LogLevel::Error);
        QCOMPARE(n5[0].phase, LogPhase::Validate);
        QCOMPARE(n5[0].message, QStringLiteral("crashed: crashed: worker died (signal 11)"));
        QCOMPARE(all.size(), 4 + 5 + 4 + 6 + 1);
    }

    void nodesWithoutReports()
    {
        // A synthetic evaluator stores no report: the node's own latency and reason still show.
        core::SearchTree tree("card-b", 1);
        test::addRoot(tree, test::passed(40.0, 50.0));
        test::addChild(tree, "n0", "unroll-2", test::failed(NodeStatus::FailedProposal, "unparsable reply"));
        test::addChild(tree, "n0", "block-256", test::compiledOnly());
        const QList<LogEntry> all = ValidationLogModel::entriesFromTree(tree);
        QCOMPARE(all.size(), 3);
        QCOMPARE(all[0].phase, LogPhase::Time);
        QCOMPARE(all[0].message, QStringLiteral("40.0 \u00b5s, 1.25x eager (eager 50.0 \u00b5s)"));
        QCOMPARE(all[1].phase, LogPhase::Search);
        QCOMPARE(all[1].message, QStringLiteral("proposal failed: unparsable reply"));
        QCOMPARE(all[2].level, LogLevel::Info);
        QCOMPARE(all[2].message, QStringLiteral("compiled only: not measured"));
        QVERIFY(ValidationLogModel::entriesFromTree(core::SearchTree("empty", 1)).isEmpty());
    }

    void modelStructureAndRoles()
    {
        ValidationLogModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setEntries(ValidationLogModel::entriesFromTree(logTree()));
        QCOMPARE(model.rowCount(), 20);
        QCOMPARE(model.columnCount(), int(ValidationLogModel::ColumnCount));
        const QModelIndex level = model.index(5, ValidationLogModel::LevelColumn); // n1's warning
        QCOMPARE(level.data().toString(), QStringLiteral("warning"));
        QCOMPARE(level.data(ValidationLogModel::LevelRole).toInt(), int(LogLevel::Warning));
        QCOMPARE(level.data(ValidationLogModel::SortRole).toInt(), int(LogLevel::Warning));
        QCOMPARE(level.data(ValidationLogModel::NodeIdRole).toString(), QStringLiteral("n1"));
        QCOMPARE(level.data(ValidationLogModel::CardIdRole).toString(), QStringLiteral("card-a"));
        QCOMPARE(level.data(ValidationLogModel::PhaseRole).toInt(), int(LogPhase::Compile));
        QCOMPARE(model.index(5, ValidationLogModel::PhaseColumn).data().toString(), QStringLiteral("compile"));
        QCOMPARE(model.index(5, ValidationLogModel::NodeColumn).data().toString(), QStringLiteral("n1"));
        QCOMPARE(model.index(5, ValidationLogModel::TimeColumn).data(ValidationLogModel::SortRole).toLongLong(),
                 qint64(1700000000000));
        QCOMPARE(model.index(5, ValidationLogModel::TimeColumn).data().toString(),
                 QDateTime::fromMSecsSinceEpoch(1700000000000).toString(QStringLiteral("HH:mm:ss.zzz")));
        QCOMPARE(model.headerData(ValidationLogModel::MessageColumn, Qt::Horizontal).toString(),
                 QStringLiteral("Message"));
        model.clear();
        QCOMPARE(model.rowCount(), 0);
    }

    void batchedAppendIsOneInsertion()
    {
        ValidationLogModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
        model.appendEntries(batch(0, 50));
        model.appendEntries({});
        model.appendEntries(batch(50, 30));
        QCOMPARE(inserted.size(), 2);
        QCOMPARE(inserted[0][1].toInt(), 0);
        QCOMPARE(inserted[0][2].toInt(), 49);
        QCOMPARE(inserted[1][1].toInt(), 50);
        QCOMPARE(inserted[1][2].toInt(), 79);
        QCOMPARE(removed.size(), 0);
        QCOMPARE(model.rowCount(), 80);
        QCOMPARE(model.entryAt(79).message, QStringLiteral("entry 79"));
    }

    void capDropsOldest()
    {
        ValidationLogModel model;
        QCOMPARE(model.maximumEntries(), 100000);
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setMaximumEntries(100);
        model.appendEntries(batch(0, 80));
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
        model.appendEntries(batch(80, 50)); // 130 > 100: the 30 oldest go, in one removal
        QCOMPARE(removed.size(), 1);
        QCOMPARE(removed[0][1].toInt(), 0);
        QCOMPARE(removed[0][2].toInt(), 29);
        QCOMPARE(inserted.size(), 1);
        QCOMPARE(model.rowCount(), 100);
        QCOMPARE(model.entryAt(0).message, QStringLiteral("entry 30"));
        QCOMPARE(model.entryAt(99).message, QStringLiteral("entry 129"));

        model.appendEntries(batch(1000, 250)); // bigger than the cap: only its newest 100 stay
        QCOMPARE(model.rowCount(), 100);
        QCOMPARE(model.entryAt(0).message, QStringLiteral("entry 1150"));
        QCOMPARE(model.entryAt(99).message, QStringLiteral("entry 1249"));

        model.setMaximumEntries(10); // lowering the cap drops the oldest
        QCOMPARE(model.rowCount(), 10);
        QCOMPARE(model.entryAt(0).message, QStringLiteral("entry 1240"));

        model.setEntries(batch(0, 25));
        QCOMPARE(model.rowCount(), 10);
        QCOMPARE(model.entryAt(0).message, QStringLiteral("entry 15"));
    }

    void tabSeparatedLine()
    {
        LogEntry e = entry(7, LogLevel::Error, QStringLiteral("n3"));
        e.message = QStringLiteral("a\tb\nc");
        QCOMPARE(ValidationLogModel::toTabSeparated(e),
                 QDateTime::fromMSecsSinceEpoch(1700000000007).toString(Qt::ISODateWithMs) +
                     QStringLiteral("\terror\tcard-a\tn3\tvalidate\ta b c"));
        e.time = {};
        QVERIFY(ValidationLogModel::toTabSeparated(e).startsWith(QStringLiteral("\terror\t")));
    }
};

QTEST_GUILESS_MAIN(ValidationLogModelTest)
#include "ValidationLogModelTest.moc"
