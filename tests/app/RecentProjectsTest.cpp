// RecentProjects: order, de-duplication, the limit of 8, and persistence through QSettings.

#include "app/RecentProjects.h"

#include <QDir>
#include <QSettings>
#include <QTemporaryDir>
#include <QTest>

using kforge::app::RecentProjects;

class RecentProjectsTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_settingsDir.isValid());
        QCoreApplication::setOrganizationName(QStringLiteral("KernelForgeTests"));
        QCoreApplication::setApplicationName(QStringLiteral("RecentProjectsTest"));
        QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, m_settingsDir.path());
    }

    void newestFirstWithoutDuplicatesAtMostEight()
    {
        RecentProjects recent(false);
        for (int i = 0; i < 10; ++i)
            recent.add(QStringLiteral("/projects/p%1").arg(i));
        QCOMPARE(recent.entries().size(), RecentProjects::kMaxEntries);
        QCOMPARE(recent.entries().front(), QStringLiteral("/projects/p9"));
        QCOMPARE(recent.entries().back(), QStringLiteral("/projects/p2"));

        recent.add(QStringLiteral("/projects/p5/")); // same folder, spelled differently
        QCOMPARE(recent.entries().size(), RecentProjects::kMaxEntries);
        QCOMPARE(recent.entries().front(), QStringLiteral("/projects/p5"));
        QCOMPARE(recent.entries().count(QStringLiteral("/projects/p5")), 1);

        recent.remove(QStringLiteral("/projects/p9"));
        QVERIFY(!recent.entries().contains(QStringLiteral("/projects/p9")));
        recent.add(QStringLiteral("relative/dir"));
        QCOMPARE(recent.entries().front(),
                 QDir::cleanPath(QDir::current().absoluteFilePath(QStringLiteral("relative/dir"))));
    }

    void persistentListSurvivesARestart()
    {
        {
            RecentProjects recent(true);
            recent.clear();
            recent.add(QStringLiteral("/projects/a"));
            recent.add(QStringLiteral("/projects/b"));
        }
        QCOMPARE(QSettings().value(QString::fromLatin1(RecentProjects::kSettingsKey)).toStringList(),
                 QStringList({QStringLiteral("/projects/b"), QStringLiteral("/projects/a")}));
        RecentProjects reloaded(true);
        QCOMPARE(reloaded.entries(), QStringList({QStringLiteral("/projects/b"), QStringLiteral("/projects/a")}));

        RecentProjects ephemeral(false);
        QVERIFY(ephemeral.entries().isEmpty());
        ephemeral.add(QStringLiteral("/projects/c"));
        QCOMPARE(RecentProjects(true).entries().size(), 2); // an ephemeral list never writes
    }

private:
    QTemporaryDir m_settingsDir;
};

QTEST_GUILESS_MAIN(RecentProjectsTest)
#include "RecentProjectsTest.moc"
