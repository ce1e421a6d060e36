// The GUI at scale (issue 6, "Scale"), offscreen: a project of 50 cards whose first card has a
// 5,000-node tree. Measures opening it until the tree is shown, frame times of the tree view while
// zooming and panning, the time from selecting a node to the editor, diff, log and charts showing
// it, and the resident memory. Prints a Markdown table; bench/results/ keeps the runs.
// Usage: QT_QPA_PLATFORM=offscreen build/tests/app/kforge_gui_scale_bench

#include "FixtureProject.h"
#include "SearchTreeTestSupport.h"
#include "app/MainWindow.h"
#include "models/Session.h"
#include "search/TreeStore.h"
#include "views/editor/KernelEditorPane.h"
#include "views/tree/TreeGraphView.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QPainter>
#include <QScrollBar>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cstdio>
#include <vector>

using namespace kforge;

namespace {

double medianOf(std::vector<double> values)
{
    std::sort(values.begin(), values.end());
    return values.empty() ? 0 : values[values.size() / 2];
}

long residentMegabytes()
{
    QFile status(QStringLiteral("/proc/self/status"));
    if (!status.open(QIODevice::ReadOnly))
        return -1;
    for (const QByteArray& line : status.readAll().split('\n'))
        if (line.startsWith("VmRSS:"))
            return line.mid(6).trimmed().split(' ').front().toLong() / 1024;
    return -1;
}

// 50 cards: the fixture's twelve, repeated with distinct keys (and so distinct ids).
core::Project fiftyCards()
{
    const core::Project base = app::test::makeFixtureProject();
    core::Project project = base;
    project.cards.clear();
    for (int i = 0; project.cards.size() < 50; ++i) {
        core::OperatorCard card = base.cards[static_cast<size_t>(i) % base.cards.size()];
        card.key += "#copy" + std::to_string(i);
        card.id = core::cardIdForKey(card.key);
        card.timeShare /= 5;
        project.cards.push_back(card);
    }
    return project;
}

} // namespace

int main(int argc, char** argv)
{
    QApplication application(argc, argv);
    QTemporaryDir dir;
    const QString projectDir = dir.filePath(QStringLiteral("scale"));
    const core::Project project = fiftyCards();
    if (!app::test::writeProject(projectDir, project))
        qFatal("cannot write the project");
    const std::string cardId = project.cards.front().id;
    const core::SearchTree tree = test::randomTree(cardId, 5000, 7);
    if (!core::TreeStore(core::TreeStore::defaultPath(projectDir.toStdString(), cardId)).save(tree))
        qFatal("cannot save the tree");

    app::MainWindow window(app::MainWindow::SettingsMode::Ephemeral);
    window.show();
    if (!QTest::qWaitForWindowExposed(&window))
        qFatal("window not exposed");

    QElapsedTimer clock;
    clock.start();
    if (!window.openProject(projectDir))
        qFatal("cannot open the project");
    window.session()->setCurrentCardId(QString::fromStdString(cardId));
    while (window.treeView()->nodeCount() < 5000 && clock.elapsed() < 60000)
        QCoreApplication::processEvents(QEventLoop::AllEvents, 5);
    const double openMs = static_cast<double>(clock.elapsed());

    // Frames of the tree view: render the viewport after each zoom or pan step.
    views::TreeGraphView* view = window.treeView();
    QImage frame(view->viewport()->size(), QImage::Format_ARGB32_Premultiplied);
    std::vector<double> frameMs;
    for (int step = 0; step < 40; ++step) {
        if (step % 2 == 0)
            view->zoomBy(step < 20 ? 1.15 : 1.0 / 1.15);
        else
            view->horizontalScrollBar()->setValue(view->horizontalScrollBar()->value() + 60);
        QElapsedTimer t;
        t.start();
        QPainter painter(&frame);
        view->viewport()->render(&painter);
        painter.end();
        frameMs.push_back(static_cast<double>(t.nsecsElapsed()) / 1e6);
    }

    // Selecting a node: editor (source, plan), diff against the parent, log filter, charts.
    std::vector<double> selectMs;
    const auto& nodes = tree.nodes();
    for (int i = 0; i < 30; ++i) {
        const QString id = QString::fromStdString(nodes[static_cast<size_t>(i * 163 % nodes.size())].id);
        QElapsedTimer t;
        t.start();
        window.session()->setCurrentNodeId(id);
        QCoreApplication::processEvents();
        if (window.kernelEditor()->nodeId() != id)
            qFatal("the editor did not follow the selection");
        selectMs.push_back(static_cast<double>(t.nsecsElapsed()) / 1e6);
    }

    const long rss = residentMegabytes();
    std::printf("| measure | value | goal |\n|---|---|---|\n");
    std::printf("| open 50-card project, select the card, 5,000-node tree shown | %.0f ms | < 2000 ms |\n", openMs);
    std::printf("| tree view frame while zooming/panning (median, max of 40) | %.1f ms, %.1f ms | < 16 ms |\n",
                medianOf(frameMs), *std::max_element(frameMs.begin(), frameMs.end()));
    std::printf("| select a node -> editor, diff, log, charts (median, max of 30) | %.1f ms, %.1f ms | < 100 ms |\n",
                medianOf(selectMs), *std::max_element(selectMs.begin(), selectMs.end()));
    std::printf("| resident memory | %ld MB | < 500 MB |\n", rss);
    const bool met = openMs < 2000 && *std::max_element(frameMs.begin(), frameMs.end()) < 16 &&
        *std::max_element(selectMs.begin(), selectMs.end()) < 100 && rss < 500;
    std::printf("\ngoals %s\n", met ? "met" : "NOT met");
    return met ? 0 : 1;
}
