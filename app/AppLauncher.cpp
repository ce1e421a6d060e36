#include "app/AppLauncher.h"

#include "app/MainWindow.h"
#include "app/ScreenshotCommand.h"
#include "util/ArgParser.h"
#include "util/Version.h"

#include <QApplication>
#include <QCommandLineParser>

#include <cstdio>
#include <cstdlib>

namespace kforge::app {
namespace {

int fail(const QString& message, int exitCode)
{
    std::fprintf(stderr, "kernelforge: error: %s\n", qPrintable(message));
    return exitCode;
}

} // namespace

int runKernelForge(QApplication& app)
{
    QApplication::setApplicationName(QStringLiteral("Kernel Forge"));
    QApplication::setOrganizationName(QStringLiteral("KernelForge"));
    QApplication::setApplicationVersion(QString::fromLatin1(core::kKforgeVersion));

    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("Kernel Forge: operator cards and specialized CUDA kernels for PyTorch models."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("PROJECT_DIR"), QStringLiteral("a project folder to open"),
                                 QStringLiteral("[PROJECT_DIR]"));
    const QCommandLineOption screenshot(
        QStringLiteral("screenshot"),
        QStringLiteral("render the main window to FILE.png once the project is loaded, and exit"),
        QStringLiteral("FILE.png"));
    const QCommandLineOption card(QStringLiteral("card"),
                                  QStringLiteral("with --screenshot: the card to select, by id or unique id prefix "
                                                 "(default: the card with the best speedup, else the top row)"),
                                  QStringLiteral("ID"));
    const QCommandLineOption node(QStringLiteral("node"),
                                  QStringLiteral("with --screenshot: the node of the card's search tree to select "
                                                 "(default: its best node, else its root)"),
                                  QStringLiteral("ID"));
    const QCommandLineOption pane(
        QStringLiteral("pane"),
        QStringLiteral("with --screenshot: the pane to bring to the front, one of %1 (default: the default layout)")
            .arg(screenshotPaneNames().join(QStringLiteral(", "))),
        QStringLiteral("NAME"));
    const QCommandLineOption size(QStringLiteral("size"),
                                  QStringLiteral("with --screenshot: the window's size (default: %1x%2)")
                                      .arg(kScreenshotWidth)
                                      .arg(kScreenshotHeight),
                                  QStringLiteral("WxH"));
    const QCommandLineOption timeout(
        QStringLiteral("timeout"),
        QStringLiteral("with --screenshot: how long the loading may take (default: %1)").arg(kScreenshotTimeoutS),
        QStringLiteral("SECONDS"));
    parser.addOptions({screenshot, card, node, pane, size, timeout});
    if (!parser.parse(app.arguments()))
        return fail(parser.errorText(), 2);
    if (parser.isSet(QStringLiteral("help")))
        parser.showHelp(0);
    if (parser.isSet(QStringLiteral("version")))
        parser.showVersion();
    const QStringList positional = parser.positionalArguments();
    if (positional.size() > 1)
        return fail(QStringLiteral("expected at most one PROJECT_DIR, got %1 (see --help)").arg(positional.size()), 2);
    const QString projectDir = positional.value(0);

    if (!parser.isSet(screenshot)) {
        for (const QCommandLineOption& option : {card, node, pane, size, timeout})
            if (parser.isSet(option))
                return fail(QStringLiteral("--%1 goes with --screenshot only").arg(option.names().constFirst()), 2);
        MainWindow window;
        window.show();
        if (!projectDir.isEmpty())
            window.openProject(projectDir);
        return app.exec();
    }

    ScreenshotRequest request;
    request.projectDir = projectDir;
    request.cardId = parser.value(card);
    request.nodeId = parser.value(node);
    if (parser.isSet(pane)) {
        request.pane = screenshotPaneFromName(parser.value(pane));
        if (!request.pane)
            return fail(QStringLiteral("--pane %1: expected one of %2")
                            .arg(parser.value(pane), screenshotPaneNames().join(QStringLiteral(", "))),
                        2);
    }
    if (parser.isSet(size)) {
        const std::optional<QSize> parsed = screenshotSizeFromText(parser.value(size));
        if (!parsed)
            return fail(
                QStringLiteral("--size %1: expected WIDTHxHEIGHT in pixels, as 1400x860").arg(parser.value(size)), 2);
        request.size = *parsed;
    }
    if (parser.isSet(timeout)) {
        double seconds = 0;
        if (!core::parseSeconds(parser.value(timeout).toStdString(), seconds))
            return fail(QString::fromStdString(core::secondsError("--timeout", parser.value(timeout).toStdString())),
                        2);
        request.timeoutMs = static_cast<int>(seconds * 1000);
    }
    const ScreenshotOutcome outcome = takeScreenshot(request, parser.value(screenshot));
    switch (outcome.status) {
    case ScreenshotOutcome::Status::Ready:
        return 0;
    case ScreenshotOutcome::Status::Failed:
        return fail(outcome.error, 1);
    case ScreenshotOutcome::Status::TimedOut:
        fail(outcome.error, 1);
        std::_Exit(1); // not waiting for the pool threads still reading (see takeScreenshot)
    }
    return 1;
}

} // namespace kforge::app
