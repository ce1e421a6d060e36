// The kernelforge executable's command line: --screenshot over a project writes a real PNG of the
// size asked for and exits 0; a bad project, card, node, pane or size, a PNG that cannot be
// written, a loading that times out and bad arguments exit non-zero with one line on stderr.
// (What the options select is checked in process: ScreenshotOptionsTest.)

#include "FixtureProject.h"
#include "SearchTreeTestSupport.h"
#include "search/TreeStore.h"
#include "util/Version.h"

#include <QDir>
#include <QFileInfo>
#include <QImage>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>

namespace {

struct Run {
    int exitCode = -1;
    QByteArray out;
    QByteArray err;
};

// Runs kernelforge offscreen, or with `headless` as on a machine without a display: no
// QT_QPA_PLATFORM, DISPLAY or WAYLAND_DISPLAY.
Run runKernelForge(const QStringList& arguments, bool headless = false)
{
    QProcess process;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    if (headless) {
        for (const char* name : {"QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY"})
            env.remove(QString::fromLatin1(name));
    } else {
        env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    }
    process.setProcessEnvironment(env);
    process.start(QStringLiteral(KFORGE_KERNELFORGE_EXE), arguments);
    Run run;
    if (!process.waitForFinished(120000) || process.exitStatus() != QProcess::NormalExit)
        return run;
    run.exitCode = process.exitCode();
    run.out = process.readAllStandardOutput();
    run.err = process.readAllStandardError();
    return run;
}

/// Writes the fixture project into `dir` with a plausible search tree on its first card; returns
/// that card's id (empty on failure).
QString writeSearchedProject(const QString& dir)
{
    const kforge::core::Project project = kforge::app::test::makeFixtureProject();
    if (!kforge::app::test::writeProject(dir, project))
        return {};
    const std::string cardId = project.cards.front().id;
    const kforge::core::SearchTree tree = kforge::test::plausibleTree(cardId, 30, 30);
    if (!kforge::core::TreeStore(kforge::core::TreeStore::defaultPath(dir.toStdString(), cardId)).save(tree).ok())
        return {};
    return QString::fromStdString(cardId);
}

} // namespace

class KernelForgeExeTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_searched = m_dir.filePath(QStringLiteral("searched"));
        m_searchedCard = writeSearchedProject(m_searched);
        QVERIFY(!m_searchedCard.isEmpty());
    }

    void screenshotOfAProject()
    {
        const QString project = m_dir.filePath(QStringLiteral("proj"));
        QVERIFY(kforge::app::test::writeFixtureProject(project));
        const QString png = m_dir.filePath(QStringLiteral("shot.png"));
        const Run run = runKernelForge({project, QStringLiteral("--screenshot"), png});
        QVERIFY2(run.exitCode == 0, run.err.constData());
        QVERIFY2(run.err.isEmpty(), run.err.constData());
        const QImage image(png);
        QVERIFY(!image.isNull());
        QCOMPARE(image.size(), QSize(1400, 860));
    }

    void withoutADisplayAScreenshotRendersOffscreenAndAWindowFailsWithOneLine()
    {
        const QString png = m_dir.filePath(QStringLiteral("headless.png"));
        const Run shot = runKernelForge({m_searched, QStringLiteral("--screenshot"), png}, true);
        QVERIFY2(shot.exitCode == 0, shot.err.constData());
        QVERIFY(!QImage(png).isNull());
        const Run help = runKernelForge({QStringLiteral("--help")}, true);
        QCOMPARE(help.exitCode, 0);
        QVERIFY(help.out.contains("--screenshot"));
        const Run window = runKernelForge({m_searched}, true);
        QCOMPARE(window.exitCode, 1);
        QCOMPARE(QString::fromUtf8(window.err),
                 QStringLiteral("kernelforge: error: no display to open the window on (DISPLAY and WAYLAND_DISPLAY "
                                "are unset); on a machine without one, --screenshot FILE.png renders it offscreen\n"));
    }

    void screenshotWithoutAProject()
    {
        const QString png = m_dir.filePath(QStringLiteral("empty.png"));
        const Run run = runKernelForge({QStringLiteral("--screenshot"), png});
        QVERIFY2(run.exitCode == 0, run.err.constData());
        QVERIFY(!QImage(png).isNull());
    }

    void aFolderThatIsNoProjectFailsWithOneLine()
    {
        const QString png = m_dir.filePath(QStringLiteral("never.png"));
        const Run run = runKernelForge({m_dir.path(), QStringLiteral("--screenshot"), png});
        QCOMPARE(run.exitCode, 1);
        QCOMPARE(
            QString::fromUtf8(run.err),
            QStringLiteral("kernelforge: error: %1: not a Kernel Forge project (no project.json)\n").arg(m_dir.path()));
        QVERIFY(!QFile::exists(png));
    }

    void anUnwritablePngFailsWithOneLine()
    {
        const QString project = m_dir.filePath(QStringLiteral("proj2"));
        QVERIFY(kforge::app::test::writeFixtureProject(project));
        const QString png = m_dir.filePath(QStringLiteral("no/such/folder/shot.png"));
        const Run run = runKernelForge({project, QStringLiteral("--screenshot"), png});
        QCOMPARE(run.exitCode, 1);
        QCOMPARE(QString::fromUtf8(run.err),
                 QStringLiteral("kernelforge: error: %1: could not write the PNG\n").arg(png));
    }

    void screenshotWithCardNodePaneAndSize()
    {
        const QString png = m_dir.filePath(QStringLiteral("diff.png"));
        const Run run = runKernelForge({m_searched, QStringLiteral("--screenshot"), png, QStringLiteral("--card"),
                                        m_searchedCard.left(8), QStringLiteral("--node"), QStringLiteral("n3"),
                                        QStringLiteral("--pane"), QStringLiteral("diff"), QStringLiteral("--size"),
                                        QStringLiteral("1200x760")});
        QVERIFY2(run.exitCode == 0, run.err.constData());
        QVERIFY2(run.err.isEmpty(), run.err.constData());
        QCOMPARE(QImage(png).size(), QSize(1200, 760));
    }

    void screenshotRefusals_data()
    {
        QTest::addColumn<QStringList>("options"); // after PROJECT --screenshot FILE
        QTest::addColumn<int>("exitCode");
        // In both: %1 the searched card, %2 the project, %3 its second card (no tree).
        QTest::addColumn<QString>("error");

        QTest::newRow("unknown card")
            << QStringList{QStringLiteral("--card"), QStringLiteral("feedbeef")} << 1
            << QStringLiteral("--card feedbeef: no card with that id (or the prefix is ambiguous) in %2");
        QTest::newRow("unknown node") << QStringList{QStringLiteral("--card"), QStringLiteral("%1"),
                                                     QStringLiteral("--node"), QStringLiteral("n999")}
                                      << 1
                                      << QStringLiteral(
                                             "--node n999: no node with that id in the search tree of card %1");
        QTest::newRow("node without a tree") << QStringList{QStringLiteral("--card"), QStringLiteral("%3"),
                                                            QStringLiteral("--node"), QStringLiteral("n0")}
                                             << 1 << QStringLiteral("--node n0: card %3 has no search tree");
        QTest::newRow("unknown pane") << QStringList{QStringLiteral("--pane"), QStringLiteral("cards")} << 2
                                      << QStringLiteral(
                                             "--pane cards: expected one of tree, editor, diff, assembly, charts, log");
        QTest::newRow("bad size") << QStringList{QStringLiteral("--size"), QStringLiteral("big")} << 2
                                  << QStringLiteral("--size big: expected WIDTHxHEIGHT in pixels, as 1400x860");
        QTest::newRow("bad timeout") << QStringList{QStringLiteral("--timeout"), QStringLiteral("0")} << 2
                                     << QStringLiteral("--timeout: expected seconds > 0 and at most 604800, got '0'");
    }

    void screenshotRefusals()
    {
        QFETCH(QStringList, options);
        QFETCH(int, exitCode);
        QFETCH(QString, error);
        const QString second = QString::fromStdString(kforge::app::test::makeFixtureProject().cards.at(1).id);
        const auto fill = [&](QString text) {
            return text.replace(QStringLiteral("%1"), m_searchedCard)
                .replace(QStringLiteral("%2"), m_searched)
                .replace(QStringLiteral("%3"), second);
        };
        const QString png = m_dir.filePath(QStringLiteral("refused.png"));
        QStringList arguments{m_searched, QStringLiteral("--screenshot"), png};
        for (const QString& option : options)
            arguments << fill(option);
        const Run run = runKernelForge(arguments);
        QCOMPARE(run.exitCode, exitCode);
        QCOMPARE(QString::fromUtf8(run.err), QStringLiteral("kernelforge: error: ") + fill(error) + QLatin1Char('\n'));
        QVERIFY(!QFile::exists(png));
    }

    void aLoadingThatHangsTimesOutWithOneLine()
    {
        // The first card's tree file is a FIFO nobody writes: reading it blocks for ever.
        const QString project = m_dir.filePath(QStringLiteral("hangs"));
        const QString card = writeSearchedProject(project);
        QVERIFY(!card.isEmpty());
        const QString tree = QString::fromStdString(
            kforge::core::TreeStore::defaultPath(project.toStdString(), card.toStdString()).string());
        QVERIFY(QFile::remove(tree));
        QCOMPARE(::mkfifo(QFile::encodeName(tree).constData(), 0600), 0);
        const QString png = m_dir.filePath(QStringLiteral("hangs.png"));
        const Run run = runKernelForge(
            {project, QStringLiteral("--screenshot"), png, QStringLiteral("--timeout"), QStringLiteral("1.5")});
        QCOMPARE(run.exitCode, 1);
        QCOMPARE(QString::fromUtf8(run.err),
                 QStringLiteral("kernelforge: error: %1: still loading after 1.5 s (search summaries, search tree or "
                                "GPU probe; see --timeout)\n")
                     .arg(project));
        QVERIFY(!QFile::exists(png));
    }

    void usageErrors()
    {
        Run run = runKernelForge({QStringLiteral("--bogus")});
        QCOMPARE(run.exitCode, 2);
        QCOMPARE(run.err.count('\n'), 1);
        QVERIFY(run.err.contains("bogus"));

        run = runKernelForge(
            {QStringLiteral("a"), QStringLiteral("b"), QStringLiteral("--screenshot"), QStringLiteral("x.png")});
        QCOMPARE(run.exitCode, 2);
        QCOMPARE(run.err.count('\n'), 1);

        // The screenshot options go with --screenshot only (else the window would open).
        run = runKernelForge({QStringLiteral("--pane"), QStringLiteral("log")});
        QCOMPARE(run.exitCode, 2);
        QCOMPARE(QString::fromUtf8(run.err),
                 QStringLiteral("kernelforge: error: --pane goes with --screenshot only\n"));

        run = runKernelForge({QStringLiteral("--help")});
        QCOMPARE(run.exitCode, 0);
        for (const char* option : {"--screenshot <FILE.png>", "--card <ID>", "--node <ID>", "--pane <NAME>",
                                   "--size <WxH>", "--timeout <SECONDS>"})
            QVERIFY2(run.out.contains(option), option);

        run = runKernelForge({QStringLiteral("--version")});
        QCOMPARE(run.exitCode, 0);
        QCOMPARE(run.out, QByteArray("Kernel Forge ") + kforge::core::kKforgeVersion + '\n');
    }

private:
    QTemporaryDir m_dir;
    QString m_searched;     // the fixture project with a search tree on its first card
    QString m_searchedCard; // that card's id
};

QTEST_GUILESS_MAIN(KernelForgeExeTest)
#include "KernelForgeExeTest.moc"
