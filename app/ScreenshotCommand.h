#pragma once
// `kernelforge [PROJECT_DIR] --screenshot FILE [--card ID] [--node ID] [--pane NAME] [--size WxH]
// [--timeout SECONDS]`: a picture of the main window over a project as it is on disk. The window
// opens the project and the event loop runs (no sleeps) until what it reads on pool threads has
// arrived: the cards' search summaries, then the chosen card's search tree (and the GPU probe of
// the status bar). Then the node is chosen, the pane brought to the front, and the window grabbed.
//
// Defaults: the card with the best speedup (the cards table's speedup column: core::nodeSpeedup of
// core::bestNode, model/NodeRanking.h), else the top row of the cards table; that card's best node
// (core::bestNode), else the root of its tree; the default layout (tree and editor in front).
//
// Thread: the GUI thread, with the QApplication constructed.

#include "app/MainWindow.h"

#include <QImage>
#include <QSize>
#include <QString>
#include <QStringList>

#include <optional>

namespace kforge::app {

inline constexpr int kScreenshotWidth = 1400;
inline constexpr int kScreenshotHeight = 860;
inline constexpr int kScreenshotTimeoutS = 60;

struct ScreenshotRequest {
    QString projectDir;                   // empty: the window without a project
    QString cardId;                       // an id or unique id prefix; empty: the default card
    QString nodeId;                       // "n12"; empty: the default node
    std::optional<MainWindow::Pane> pane; // none: the default layout's front panes
    QSize size{kScreenshotWidth, kScreenshotHeight};
    int timeoutMs = kScreenshotTimeoutS * 1000; // for all the loading together
};

/// The --pane names, in MainWindow::Pane order: tree, editor, diff, assembly, charts, log.
QStringList screenshotPaneNames();
/// The pane a --pane name stands for; nullopt for any other name.
std::optional<MainWindow::Pane> screenshotPaneFromName(const QString& name);
/// A --size value "WxH" (each 1..10000); nullopt when it is not one.
std::optional<QSize> screenshotSizeFromText(const QString& text);

struct ScreenshotOutcome {
    enum class Status { Ready, Failed, TimedOut };
    Status status = Status::Ready;
    QString error; // the one-line error of Failed and TimedOut
};

/// Lays `window` (an Ephemeral one) out at `request.size`, shows it, opens the project, waits for
/// the loading, and makes the card, node and pane current. Failed for a project that cannot be
/// opened, an unknown card or node, a --node on a card without a search tree, a window that cannot
/// be that small, or an error the window reports meanwhile (a damaged tree file: the window's error
/// reporter is replaced); TimedOut when the loading takes longer than request.timeoutMs.
ScreenshotOutcome prepareScreenshot(MainWindow& window, const ScreenshotRequest& request);

/// The full id of the default card of the open project (see above); empty without a project.
QString defaultScreenshotCard(const MainWindow& window);

/// The window as it is drawn now (pending events processed first), via QWidget::grab().
QImage grabScreenshot(MainWindow& window);

/// The whole command in a window of its own: prepareScreenshot, then the PNG written to `file`
/// (Failed when it cannot be). On TimedOut the caller should end the process without waiting for
/// the pool threads still reading (a hung file system cannot be stopped).
ScreenshotOutcome takeScreenshot(const ScreenshotRequest& request, const QString& file);

} // namespace kforge::app
