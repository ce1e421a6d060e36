#include "app/ScreenshotCommand.h"

#include "model/NodeRanking.h"
#include "models/CardsTableModel.h"
#include "models/SearchTreeModel.h"
#include "models/Session.h"
#include "views/cards/CardsPane.h"

#include <QApplication>
#include <QDeadlineTimer>
#include <QEventLoop>
#include <QRegularExpression>
#include <QSortFilterProxyModel>
#include <QTimer>

#include <algorithm>
#include <memory>

namespace kforge::app {
namespace {

constexpr int kMaxScreenshotSide = 10000;

ScreenshotOutcome failed(const QString& error)
{
    return {ScreenshotOutcome::Status::Failed, error};
}

/// Runs the event loop until the window has nothing left to read; false when `deadline` passes
/// first.
bool waitForLoading(MainWindow& window, const QDeadlineTimer& deadline)
{
    if (!window.isLoading())
        return true;
    QEventLoop loop;
    QObject::connect(&window, &MainWindow::loadingFinished, &loop, [&loop]() { loop.exit(0); });
    QTimer timer;
    timer.setSingleShot(true);
    QObject::connect(&timer, &QTimer::timeout, &loop, [&loop]() { loop.exit(1); });
    timer.start(std::max<qint64>(0, deadline.remainingTime()));
    return loop.exec() == 0;
}

/// The node --node defaults to on the card's tree: core's best node, else the root; empty for an
/// empty tree.
QString defaultNode(const core::SearchTree& tree)
{
    if (const core::SearchNode* best = core::bestNode(tree))
        return QString::fromStdString(best->id);
    return tree.nodes().empty() ? QString() : QString::fromStdString(tree.nodes().front().id);
}

} // namespace

QStringList screenshotPaneNames()
{
    return {QStringLiteral("tree"),     QStringLiteral("editor"), QStringLiteral("diff"),
            QStringLiteral("assembly"), QStringLiteral("charts"), QStringLiteral("log")};
}

std::optional<MainWindow::Pane> screenshotPaneFromName(const QString& name)
{
    static constexpr MainWindow::Pane kPanes[] = {MainWindow::Pane::Tree,   MainWindow::Pane::Editor,
                                                  MainWindow::Pane::Diff,   MainWindow::Pane::Assembly,
                                                  MainWindow::Pane::Charts, MainWindow::Pane::Log};
    const qsizetype index = screenshotPaneNames().indexOf(name);
    if (index < 0)
        return std::nullopt;
    return kPanes[index];
}

std::optional<QSize> screenshotSizeFromText(const QString& text)
{
    static const QRegularExpression kSize(QStringLiteral("^([0-9]{1,5})x([0-9]{1,5})$"));
    const QRegularExpressionMatch match = kSize.match(text);
    if (!match.hasMatch())
        return std::nullopt;
    const QSize size(match.captured(1).toInt(), match.captured(2).toInt());
    if (size.width() < 1 || size.height() < 1 || size.width() > kMaxScreenshotSide ||
        size.height() > kMaxScreenshotSide)
        return std::nullopt;
    return size;
}

QString defaultScreenshotCard(const MainWindow& window)
{
    // In the cards table's order (largest share first): a tie, or no speedup at all, goes to the
    // upper row.
    const QSortFilterProxyModel* table = window.cardsPane()->proxyModel();
    const CardsTableModel* cards = window.cardsModel();
    QString best;
    std::optional<double> bestSpeedup;
    for (int row = 0; row < table->rowCount(); ++row) {
        const core::OperatorCard* card = cards->cardAt(table->mapToSource(table->index(row, 0)).row());
        if (!card)
            continue;
        const std::optional<double> speedup = cards->summaryOf(*card).speedup;
        if (best.isEmpty() || (speedup && (!bestSpeedup || *speedup > *bestSpeedup))) {
            best = QString::fromStdString(card->id);
            bestSpeedup = speedup;
        }
    }
    return best;
}

ScreenshotOutcome prepareScreenshot(MainWindow& window, const ScreenshotRequest& request)
{
    const QDeadlineTimer deadline(request.timeoutMs);
    // The first error the window reports is the cause; later ones follow from it.
    auto reported = std::make_shared<QString>();
    window.setErrorReporter([reported](const QString&, const QString& message) {
        if (reported->isEmpty())
            *reported = message;
    });
    const auto timedOut = [&]() {
        return ScreenshotOutcome{
            ScreenshotOutcome::Status::TimedOut,
            QStringLiteral("%1: still loading after %2 s (search summaries, search tree or GPU probe; see --timeout)")
                .arg(request.projectDir.isEmpty() ? QStringLiteral("the main window") : request.projectDir)
                .arg(request.timeoutMs / 1000.0)};
    };

    window.resize(request.size);
    window.resetLayout(); // the docks' sizes follow the window's
    window.show();
    if (window.size() != request.size)
        return failed(QStringLiteral("--size %1x%2: the window cannot be that small (at least %3x%4)")
                          .arg(request.size.width())
                          .arg(request.size.height())
                          .arg(window.width())
                          .arg(window.height()));
    if (!request.projectDir.isEmpty() && !window.openProject(request.projectDir))
        return failed(*reported);
    if (!waitForLoading(window, deadline))
        return timedOut();
    if (!reported->isEmpty())
        return failed(*reported);

    Session* session = window.session();
    if (!session->hasProject()) {
        if (!request.cardId.isEmpty() || !request.nodeId.isEmpty())
            return failed(QStringLiteral("--card and --node need a PROJECT_DIR"));
    } else {
        QString cardId = defaultScreenshotCard(window);
        if (!request.cardId.isEmpty()) {
            const core::OperatorCard* card = session->project()->findCard(request.cardId.toStdString());
            if (!card)
                return failed(QStringLiteral("--card %1: no card with that id (or the prefix is ambiguous) in %2")
                                  .arg(request.cardId, request.projectDir));
            cardId = QString::fromStdString(card->id);
        }
        session->setCurrentCardId(cardId); // the cards table follows; the card's tree is read
        if (!waitForLoading(window, deadline))
            return timedOut();
        if (!reported->isEmpty())
            return failed(*reported);
        // The views follow the tree model through queued updates (the graph is laid out on a zero
        // timer): let them catch up before a node is chosen in them.
        QApplication::processEvents();

        // The tree model holds this card's tree once its file was read; a card never searched has none.
        const SearchTreeModel* trees = window.searchTreeModel();
        const bool hasTree = trees->cardId() == cardId;
        QString nodeId = hasTree ? defaultNode(trees->tree()) : QString();
        if (!request.nodeId.isEmpty()) {
            if (!hasTree)
                return failed(QStringLiteral("--node %1: card %2 has no search tree").arg(request.nodeId, cardId));
            if (!trees->tree().find(request.nodeId.toStdString()))
                return failed(QStringLiteral("--node %1: no node with that id in the search tree of card %2")
                                  .arg(request.nodeId, cardId));
            nodeId = request.nodeId;
        }
        session->setCurrentNodeId(nodeId);
    }
    if (request.pane) {
        window.showPane(*request.pane);
        // The PTX / SASS tab compiles the node's listing now: the picture waits for it.
        if (!waitForLoading(window, deadline))
            return timedOut();
    }
    return {};
}

QImage grabScreenshot(MainWindow& window)
{
    QApplication::processEvents();
    return window.grab().toImage();
}

ScreenshotOutcome takeScreenshot(const ScreenshotRequest& request, const QString& file)
{
    MainWindow window(MainWindow::SettingsMode::Ephemeral);
    const ScreenshotOutcome outcome = prepareScreenshot(window, request);
    if (outcome.status != ScreenshotOutcome::Status::Ready)
        return outcome;
    const QImage image = grabScreenshot(window);
    if (image.isNull() || !image.save(file, "PNG"))
        return failed(QStringLiteral("%1: could not write the PNG").arg(file));
    return outcome;
}

} // namespace kforge::app
