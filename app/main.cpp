// kernelforge: the Kernel Forge desktop application (see AppLauncher.h for the command line).

#include "app/AppLauncher.h"
#include "app/QtMessageFilter.h"

#include <QApplication>

#include <cstdio>
#include <cstring>

namespace {

// Without a display Qt's default platform aborts the process with a paragraph about platform
// plugins. A screenshot, --help and --version need no display: they run offscreen. A window does:
// one error line and exit 1. An explicit QT_QPA_PLATFORM is left to Qt.
bool chooseDisplay(int argc, char** argv)
{
    if (!qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") || !qEnvironmentVariableIsEmpty("DISPLAY") ||
        !qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY"))
        return true;
    for (int i = 1; i < argc; ++i) {
        const char* a = argv[i];
        if (std::strcmp(a, "--screenshot") == 0 || std::strncmp(a, "--screenshot=", 13) == 0 ||
            std::strcmp(a, "--help") == 0 || std::strcmp(a, "-h") == 0 || std::strcmp(a, "--version") == 0 ||
            std::strcmp(a, "-v") == 0) {
            qputenv("QT_QPA_PLATFORM", "offscreen");
            return true;
        }
    }
    std::fputs("kernelforge: error: no display to open the window on (DISPLAY and WAYLAND_DISPLAY are unset); "
               "on a machine without one, --screenshot FILE.png renders it offscreen\n",
               stderr);
    return false;
}

} // namespace

int main(int argc, char** argv)
{
    if (!chooseDisplay(argc, argv))
        return 1;
    kforge::app::installQtMessageFilter();
    QApplication app(argc, argv);
    return kforge::app::runKernelForge(app);
}
