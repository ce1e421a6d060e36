// The kernelforge executable's command line: --screenshot over a project writes a real PNG and
// exits 0; a bad project or bad arguments exit non-zero with one line on stderr.

#include "FixtureProject.h"
#include "util/Version.h"

#include <QImage>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

namespace {

struct Run {
    int exitCode = -1;
    QByteArray out;
    QByteArray err;
};

Run runKernelForge(const QStringList& arguments)
{
    QProcess process;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
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

} // namespace

class KernelForgeExeTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

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

        run = runKernelForge({QStringLiteral("--version")});
        QCOMPARE(run.exitCode, 0);
        QCOMPARE(run.out, QByteArray("Kernel Forge ") + kforge::core::kKforgeVersion + '\n');
    }

private:
    QTemporaryDir m_dir;
};

QTEST_GUILESS_MAIN(KernelForgeExeTest)
#include "KernelForgeExeTest.moc"
