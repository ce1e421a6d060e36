#include "app/AppLauncher.h"

#include "app/MainWindow.h"
#include "models/Session.h"
#include "util/Version.h"
#include "views/cards/CardsPane.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QTableView>

#include <cstdio>

namespace kforge::app {
namespace {

int fail(const QString& message, int exitCode)
{
    std::fprintf(stderr, "kernelforge: error: %s\n", qPrintable(message));
    return exitCode;
}

int takeScreenshot(const QString& projectDir, const QString& pngPath)
{
    MainWindow window(MainWindow::SettingsMode::Ephemeral);
    QString openError;
    window.setErrorReporter([&openError](const QString&, const QString& message) { openError = message; });
    if (!projectDir.isEmpty() && !window.openProject(projectDir))
        return fail(openError, 1);
    const QImage image = renderScreenshot(window);
    if (image.isNull() || !image.save(pngPath, "PNG"))
        return fail(QStringLiteral("%1: could not write the PNG").arg(pngPath), 1);
    return 0;
}

} // namespace

QImage renderScreenshot(MainWindow& window)
{
    window.resize(kScreenshotWidth, kScreenshotHeight);
    window.resetLayout();
    QTableView* table = window.cardsPane()->tableView();
    if (table->model()->rowCount() > 0 && window.session()->currentCardId().isEmpty())
        table->selectRow(0); // the top card, unless the caller chose one
    window.show();
    QApplication::processEvents();
    return window.grab().toImage();
}

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
    const QCommandLineOption screenshot(QStringLiteral("screenshot"),
                                        QStringLiteral("render the main window to FILE.png and exit"),
                                        QStringLiteral("FILE.png"));
    parser.addOption(screenshot);
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

    if (parser.isSet(screenshot))
        return takeScreenshot(projectDir, parser.value(screenshot));

    MainWindow window;
    window.show();
    if (!projectDir.isEmpty())
        window.openProject(projectDir);
    return app.exec();
}

} // namespace kforge::app
