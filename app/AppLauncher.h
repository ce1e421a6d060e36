#pragma once
// The kernelforge command line: `kernelforge [PROJECT_DIR] [--screenshot FILE.png]`.
//
// Without --screenshot: shows the main window (persistent settings) and opens PROJECT_DIR if
// given, reporting a bad one in a dialog; returns the event loop's exit code.
// With --screenshot: renders the main window (see renderScreenshot; no settings read or written)
// into FILE.png and returns 0, or writes one line to stderr and returns 1 when the project cannot
// be opened or the PNG not written. Works offscreen (QT_QPA_PLATFORM=offscreen). Usage errors
// return 2.
//
// Thread: the GUI thread, with `app` constructed and nothing else running.

#include <QImage>

class QApplication;

namespace kforge::app {

class MainWindow;

inline constexpr int kScreenshotWidth = 1400;
inline constexpr int kScreenshotHeight = 860;

int runKernelForge(QApplication& app);

/// What --screenshot renders: `window` at kScreenshotWidth x kScreenshotHeight in its default
/// layout with the card of largest share current, shown (offscreen works) and grabbed with
/// QWidget::grab().
QImage renderScreenshot(MainWindow& window);

} // namespace kforge::app
