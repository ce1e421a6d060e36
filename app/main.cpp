// kernelforge: the Kernel Forge desktop application (see AppLauncher.h for the command line).

#include "app/AppLauncher.h"
#include "app/QtMessageFilter.h"

#include <QApplication>

int main(int argc, char** argv)
{
    kforge::app::installQtMessageFilter();
    QApplication app(argc, argv);
    return kforge::app::runKernelForge(app);
}
