#pragma once
// Keeps stderr to what matters: installs a Qt message handler that drops a fixed list of benign
// platform notices (the offscreen plugin's "This plugin does not support raise()" and the like,
// QStandardPaths' fallback when XDG_RUNTIME_DIR is unset) and hands every other message to the
// handler that was installed before. With it, `kernelforge --screenshot` keeps its contract of one
// stderr line on error, also offscreen.
//
// Thread: call once from main() before the QApplication is constructed; the handler itself is
// thread-safe (it only reads constant data).

namespace kforge::app {

void installQtMessageFilter();

} // namespace kforge::app
