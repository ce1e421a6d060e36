#include "app/QtMessageFilter.h"

#include <QString>
#include <QtGlobal>

#include <array>

namespace kforge::app {
namespace {

QtMessageHandler g_previous = nullptr;

// Message prefixes that say nothing about Kernel Forge or the user's data.
constexpr std::array<QLatin1StringView, 2> kBenignPrefixes = {
    QLatin1StringView("This plugin does not support "),           // QPA plugins without window management
    QLatin1StringView("QStandardPaths: XDG_RUNTIME_DIR not set"), // headless sessions
};

void filterMessage(QtMsgType type, const QMessageLogContext& context, const QString& message)
{
    if (type == QtWarningMsg || type == QtInfoMsg || type == QtDebugMsg) {
        for (QLatin1StringView prefix : kBenignPrefixes) {
            if (message.startsWith(prefix))
                return;
        }
    }
    if (g_previous)
        g_previous(type, context, message);
}

} // namespace

void installQtMessageFilter()
{
    g_previous = qInstallMessageHandler(filterMessage);
}

} // namespace kforge::app
