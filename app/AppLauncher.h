#pragma once
// The kernelforge command line: `kernelforge [PROJECT_DIR] [--screenshot FILE.png [--card ID]
// [--node ID] [--pane tree|editor|diff|charts|log] [--size WxH] [--timeout SECONDS]]`.
//
// Without --screenshot: shows the main window (persistent settings) and opens PROJECT_DIR if
// given, reporting a bad one in a dialog; returns the event loop's exit code.
// With --screenshot: renders the main window over the project once it is loaded, with the card,
// node and pane chosen (ScreenshotCommand.h; no settings read or written) into FILE.png and
// returns 0, or writes one line to stderr and returns 1 when the project cannot be opened, a card
// or node is not there, or the PNG cannot be written. A loading that outlasts --timeout (60 s)
// writes its line and ends the process with 1 at once. Works offscreen (QT_QPA_PLATFORM=offscreen;
// main.cpp picks it without a display, and refuses a window there with one error line).
// Usage errors (a bad option or value, a screenshot option without --screenshot) return 2.
//
// Thread: the GUI thread, with `app` constructed and nothing else running.

class QApplication;

namespace kforge::app {

int runKernelForge(QApplication& app);

} // namespace kforge::app
