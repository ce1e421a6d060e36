// ValidationLogPane over a real ValidationLogModel, offscreen: level, text and node filters through
// the widgets and the API; copying selected rows (Ctrl+C and the context-menu action) as
// tab-separated text; colours per level; following the newest row unless the user scrolled up.

#include "views/log/ValidationLogPane.h"
#include "models/ValidationLogModel.h"

#include <QAbstractItemModelTester>
#include <QAction>
#include <QApplication>
#include <QBrush>
#include <QClipboard>
#include <QComboBox>
#include <QElapsedTimer>
#include <QItemSelectionModel>
#include <QLineEdit>
#include <QScrollBar>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTest>
#include <QToolButton>

using kforge::app::LogEntry;
using kforge::app::LogLevel;
using kforge::app::LogPhase;
using kforge::app::ValidationLogModel;
using kforge::views::ValidationLogPane;

namespace {

LogEntry entry(qint64 k, LogLevel level, const QString& card, const QString& node, LogPhase phase,
               const QString& message)
{
    return LogEntry{QDateTime::fromMSecsSinceEpoch(1700000000000 + k), level, card, node, phase, message};
}

QList<LogEntry> sample()
{
    const QString a = QStringLiteral("card-a");
    const QString b = QStringLiteral("card-b");
    return {
        entry(0, LogLevel::Info, a, QStringLiteral("n0"), LogPhase::Compile,
              QStringLiteral("compiled for sm_90 in 68.7 ms")),
        entry(1, LogLevel::Warning, a, QStringLiteral("n1"), LogPhase::Compile,
              QStringLiteral("candidate.cu:3: variable \"y\" was declared but never referenced")),
        entry(2, LogLevel::Error, a, QStringLiteral("n1"), LogPhase::Compile,
              QStringLiteral("candidate.cu:12:5: identifier \"x\" is undefined\n  x = 1;")),
        entry(3, LogLevel::Info, a, QStringLiteral("n2"), LogPhase::Time, QStringLiteral("12.3 \u00b5s, 1.85x eager")),
        entry(4, LogLevel::Error, b, QStringLiteral("n1"), LogPhase::Sanitize, QStringLiteral("racecheck: 2 error(s)")),
        entry(5, LogLevel::Info, b, QStringLiteral("n12"), LogPhase::Validate, QStringLiteral("Output 0: passed")),
    };
}

QStringList shownMessages(const ValidationLogPane& pane)
{
    QStringList messages;
    const QAbstractItemModel* proxy = pane.tableView()->model();
    for (int row = 0; row < proxy->rowCount(); ++row)
        messages
            << proxy->index(row, ValidationLogModel::MessageColumn).data(ValidationLogModel::MessageRole).toString();
    return messages;
}

QStringList shownNodes(const ValidationLogPane& pane)
{
    QStringList nodes;
    const QAbstractItemModel* proxy = pane.tableView()->model();
    for (int row = 0; row < proxy->rowCount(); ++row)
        nodes << proxy->index(row, ValidationLogModel::NodeColumn).data().toString();
    return nodes;
}

void selectRows(ValidationLogPane& pane, std::initializer_list<int> rows)
{
    QTableView* table = pane.tableView();
    table->selectionModel()->clear();
    for (int row : rows)
        table->selectionModel()->select(table->model()->index(row, 0),
                                        QItemSelectionModel::Select | QItemSelectionModel::Rows);
}

} // namespace

class ValidationLogPaneTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void levelFilter()
    {
        ValidationLogModel model;
        model.appendEntries(sample());
        ValidationLogPane pane;
        pane.setModel(&model);
        QAbstractItemModelTester tester(pane.proxyModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(pane.tableView()->model()->rowCount(), 6);

        auto* combo = pane.findChild<QComboBox*>(QStringLiteral("validationLogLevel"));
        QVERIFY(combo);
        combo->setCurrentIndex(1); // warnings and errors
        QCOMPARE(pane.minimumLevel(), LogLevel::Warning);
        QCOMPARE(shownNodes(pane), (QStringList{QStringLiteral("n1"), QStringLiteral("n1"), QStringLiteral("n1")}));
        pane.setMinimumLevel(LogLevel::Error);
        QCOMPARE(combo->currentIndex(), 2);
        QCOMPARE(shownMessages(pane), (QStringList{sample()[2].message, sample()[4].message}));
        pane.setMinimumLevel(LogLevel::Info);
        QCOMPARE(pane.tableView()->model()->rowCount(), 6);
    }

    void textFilterIsCaseInsensitiveOverMessageCardAndNode()
    {
        ValidationLogModel model;
        model.appendEntries(sample());
        ValidationLogPane pane;
        pane.setModel(&model);
        QAbstractItemModelTester tester(pane.proxyModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);

        auto* edit = pane.findChild<QLineEdit*>(QStringLiteral("validationLogFilter"));
        QVERIFY(edit);
        QTest::keyClicks(edit, QStringLiteral("OUTPUT"));
        QCOMPARE(pane.filterText(), QStringLiteral("OUTPUT"));
        QCOMPARE(shownMessages(pane), (QStringList{QStringLiteral("Output 0: passed")}));

        pane.setFilterText(QStringLiteral("CARD-B")); // the card id
        QCOMPARE(edit->text(), QStringLiteral("CARD-B"));
        QCOMPARE(shownNodes(pane), (QStringList{QStringLiteral("n1"), QStringLiteral("n12")}));

        pane.setFilterText(QStringLiteral("n12")); // the node id
        QCOMPARE(shownNodes(pane), (QStringList{QStringLiteral("n12")}));

        pane.setFilterText(QStringLiteral("x = 1")); // a later line of a message
        QCOMPARE(shownNodes(pane), (QStringList{QStringLiteral("n1")}));

        pane.setMinimumLevel(LogLevel::Warning); // filters combine
        pane.setFilterText(QStringLiteral("candidate.cu"));
        QCOMPARE(pane.tableView()->model()->rowCount(), 2);
        pane.setMinimumLevel(LogLevel::Error);
        QCOMPARE(pane.tableView()->model()->rowCount(), 1);

        pane.setFilterText({});
        pane.setMinimumLevel(LogLevel::Info);
        QCOMPARE(pane.tableView()->model()->rowCount(), 6);
    }

    void nodeFilter()
    {
        ValidationLogModel model;
        model.appendEntries(sample());
        ValidationLogPane pane;
        pane.setModel(&model);
        QAbstractItemModelTester tester(pane.proxyModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        auto* button = pane.findChild<QToolButton*>(QStringLiteral("validationLogNodeFilter"));
        QVERIFY(button);
        QVERIFY(button->isHidden());

        pane.setNodeFilter(QStringLiteral("n1"), QStringLiteral("card-a"));
        QCOMPARE(pane.nodeFilter(), QStringLiteral("n1"));
        QCOMPARE(shownMessages(pane), (QStringList{sample()[1].message, sample()[2].message}));
        QVERIFY(!button->isHidden());
        QVERIFY(button->text().contains(QStringLiteral("n1")));

        pane.setNodeFilter(QStringLiteral("n1")); // any card; exact id (n12 is not n1)
        QCOMPARE(pane.tableView()->model()->rowCount(), 3);

        pane.setNodeFilter(QStringLiteral("n9"));
        QCOMPARE(pane.tableView()->model()->rowCount(), 0);

        // New entries of the filtered node appear; others do not.
        model.appendEntries({entry(6, LogLevel::Info, QStringLiteral("card-a"), QStringLiteral("n9"), LogPhase::Compile,
                                   QStringLiteral("compiled")),
                             entry(7, LogLevel::Info, QStringLiteral("card-a"), QStringLiteral("n8"), LogPhase::Compile,
                                   QStringLiteral("compiled"))});
        QCOMPARE(shownNodes(pane), (QStringList{QStringLiteral("n9")}));

        QSignalSpy cleared(&pane, &ValidationLogPane::nodeFilterCleared);
        button->click();
        QCOMPARE(cleared.size(), 1);
        QVERIFY(pane.nodeFilter().isEmpty());
        QVERIFY(button->isHidden());
        QCOMPARE(pane.tableView()->model()->rowCount(), 8);

        pane.setNodeFilter(QStringLiteral("n0"));
        pane.setNodeFilter({}); // empty: all
        QCOMPARE(pane.tableView()->model()->rowCount(), 8);
    }

    void copySelectedRowsAsTabSeparated()
    {
        ValidationLogModel model;
        model.appendEntries(sample());
        ValidationLogPane pane;
        pane.setModel(&model);
        pane.resize(800, 300);
        pane.show();
        QVERIFY(QTest::qWaitForWindowExposed(&pane));

        const auto line = [](const LogEntry& e) {
            return e.time.toString(Qt::ISODateWithMs) + QLatin1Char('\t') + ValidationLogModel::levelName(e.level) +
                QLatin1Char('\t') + e.cardId + QLatin1Char('\t') + e.nodeId + QLatin1Char('\t') +
                ValidationLogModel::phaseName(e.phase) + QLatin1Char('\t') + e.message + QLatin1Char('\n');
        };
        const QList<LogEntry> entries = sample();
        QString multiLine = entries[2].message;
        multiLine.replace(QLatin1Char('\n'), QLatin1Char(' '));
        LogEntry flattened = entries[2];
        flattened.message = multiLine;

        // Ctrl+C on the table, rows selected out of order: view order, line breaks flattened.
        QApplication::clipboard()->clear();
        selectRows(pane, {3, 2});
        pane.tableView()->setFocus();
        QTest::keyClick(pane.tableView(), Qt::Key_C, Qt::ControlModifier);
        QCOMPARE(QApplication::clipboard()->text(), line(flattened) + line(entries[3]));

        // The context menu's action copies what the filtered view shows.
        QApplication::clipboard()->clear();
        pane.setMinimumLevel(LogLevel::Error);
        QVERIFY(pane.tableView()->actions().contains(pane.copyAction()));
        QCOMPARE(pane.tableView()->contextMenuPolicy(), Qt::ActionsContextMenu);
        selectRows(pane, {1});
        pane.copyAction()->trigger();
        QCOMPARE(QApplication::clipboard()->text(), line(entries[4]));

        // Nothing selected: the clipboard keeps what it had.
        QApplication::clipboard()->setText(QStringLiteral("before"));
        pane.tableView()->selectionModel()->clear();
        pane.copyAction()->trigger();
        QCOMPARE(QApplication::clipboard()->text(), QStringLiteral("before"));
    }

    void coloursPerLevel()
    {
        ValidationLogModel model;
        model.appendEntries(sample());
        ValidationLogPane pane;
        pane.setModel(&model);
        const QAbstractItemModel* proxy = pane.tableView()->model();
        const QColor warning = proxy->index(1, 5).data(Qt::ForegroundRole).value<QBrush>().color();
        const QColor error = proxy->index(2, 3).data(Qt::ForegroundRole).value<QBrush>().color();
        QVERIFY(!proxy->index(0, 0).data(Qt::ForegroundRole).isValid()); // info: the palette's text colour
        QVERIFY(warning.isValid() && error.isValid());
        QVERIFY(warning != error);
        QVERIFY(error.red() > error.green() && error.red() > error.blue());
    }

    void followsNewestUnlessScrolledUp()
    {
        ValidationLogModel model;
        ValidationLogPane pane;
        pane.setModel(&model);
        pane.resize(600, 200);
        pane.show();
        QVERIFY(QTest::qWaitForWindowExposed(&pane));
        QScrollBar* bar = pane.tableView()->verticalScrollBar();

        auto appendBatch = [&model](int first) {
            QList<LogEntry> batch;
            for (int k = first; k < first + 100; ++k)
                batch << entry(k, LogLevel::Info, QStringLiteral("card-a"), QStringLiteral("n%1").arg(k),
                               LogPhase::Validate, QStringLiteral("entry %1").arg(k));
            model.appendEntries(batch);
        };
        appendBatch(0);
        QTRY_VERIFY(bar->maximum() > 0);
        QTRY_COMPARE(bar->value(), bar->maximum());
        QVERIFY(pane.isFollowingNewest());
        appendBatch(100);
        QTRY_VERIFY(bar->maximum() > 0 && bar->value() == bar->maximum());
        const int bottomAfterTwo = bar->maximum();
        QVERIFY(bottomAfterTwo > 0);

        // The user scrolls up: new entries do not move the view.
        bar->setValue(bar->maximum() / 3);
        QVERIFY(!pane.isFollowingNewest());
        const int kept = bar->value();
        appendBatch(200);
        QTRY_VERIFY(bar->maximum() > bottomAfterTwo);
        QTest::qWait(50);
        QCOMPARE(bar->value(), kept);

        // Back at the bottom: following again.
        bar->setValue(bar->maximum());
        QVERIFY(pane.isFollowingNewest());
        const int bottomAfterThree = bar->maximum();
        appendBatch(300);
        QTRY_VERIFY(bar->maximum() > bottomAfterThree);
        QTRY_COMPARE(bar->value(), bar->maximum());
    }

    void filtersHundredThousandRowsQuickly()
    {
        ValidationLogModel model;
        QList<LogEntry> many;
        many.reserve(100000);
        for (int k = 0; k < 100000; ++k)
            many << entry(k, k % 10 == 0 ? LogLevel::Error : LogLevel::Info, QStringLiteral("card-a"),
                          QStringLiteral("n%1").arg(k % 500), LogPhase::Validate, QStringLiteral("entry %1").arg(k));
        model.appendEntries(many);
        ValidationLogPane pane;
        pane.setModel(&model);
        QElapsedTimer timer;
        timer.start();
        pane.setFilterText(QStringLiteral("entry 9999"));
        pane.setMinimumLevel(LogLevel::Error);
        pane.setNodeFilter(QStringLiteral("n490"));
        const qint64 ms = timer.elapsed();
        qInfo("three filter changes over 100k rows: %lld ms", ms);
        QCOMPARE(shownMessages(pane), (QStringList{QStringLiteral("entry 99990")}));
        QVERIFY2(ms < 2000, qPrintable(QString::number(ms)));
    }
};

QTEST_MAIN(ValidationLogPaneTest)
#include "ValidationLogPaneTest.moc"
