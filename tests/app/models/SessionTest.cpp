// Session: current-card bookkeeping and the order of its signals.

#include "models/Session.h"

#include <QSignalSpy>
#include <QTest>

using kforge::app::Session;
namespace core = kforge::core;

namespace {

std::shared_ptr<const core::Project> projectWithCards(std::initializer_list<const char*> ops)
{
    auto project = std::make_shared<core::Project>();
    for (const char* op : ops) {
        core::OperatorCard card;
        card.op = op;
        card.key = core::variantKey(card.op, card.overload, card.args);
        card.id = core::cardIdForKey(card.key);
        project->cards.push_back(card);
    }
    return project;
}

} // namespace

class SessionTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void currentCardMustBelongToTheProject()
    {
        Session session;
        QSignalSpy changed(&session, &Session::currentCardChanged);
        const auto project = projectWithCards({"aten::relu", "aten::gelu"});
        const QString gelu = QString::fromStdString(project->cards[1].id);

        session.setCurrentCardId(gelu); // no project yet
        QVERIFY(session.currentCardId().isEmpty());
        QCOMPARE(changed.count(), 0);

        session.setProject(project, QStringLiteral("/tmp/p"));
        QCOMPARE(session.projectDir(), QStringLiteral("/tmp/p"));
        session.setCurrentCardId(gelu);
        QCOMPARE(session.currentCardId(), gelu);
        QVERIFY(session.currentCard());
        QCOMPARE(session.currentCard()->op, std::string("aten::gelu"));
        QCOMPARE(changed.count(), 1);
        QCOMPARE(changed.last().at(0).toString(), gelu);

        session.setCurrentCardId(gelu); // unchanged: no signal
        QCOMPARE(changed.count(), 1);
        session.setCurrentCardId(gelu.left(8)); // prefixes are not ids
        QVERIFY(session.currentCardId().isEmpty());
        QCOMPARE(changed.count(), 2);
    }

    void newProjectClearsTheCurrentCardBeforeAnnouncingItself()
    {
        Session session;
        const auto first = projectWithCards({"aten::relu"});
        session.setProject(first, QStringLiteral("/tmp/a"));
        session.setCurrentCardId(QString::fromStdString(first->cards[0].id));

        QStringList order;
        connect(&session, &Session::currentCardChanged, this, [&](const QString& id) {
            order << QStringLiteral("card:") + id + QStringLiteral(" project:") + session.projectDir();
        });
        connect(&session, &Session::projectChanged, this,
                [&]() { order << QStringLiteral("project:") + session.projectDir(); });
        session.setProject(projectWithCards({"aten::add"}), QStringLiteral("/tmp/b"));
        QCOMPARE(order, QStringList({QStringLiteral("card: project:/tmp/a"), QStringLiteral("project:/tmp/b")}));
        QVERIFY(!session.currentCard());

        session.setProject(nullptr, QStringLiteral("/ignored"));
        QVERIFY(!session.hasProject());
        QVERIFY(session.projectDir().isEmpty());
    }
};

QTEST_GUILESS_MAIN(SessionTest)
#include "SessionTest.moc"
