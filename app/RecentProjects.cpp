#include "app/RecentProjects.h"

#include <QDir>
#include <QSettings>

namespace kforge::app {
namespace {

QString normalized(const QString& dir)
{
    return QDir::cleanPath(QDir(dir).absolutePath());
}

QString settingsKey()
{
    return QString::fromLatin1(RecentProjects::kSettingsKey);
}

} // namespace

RecentProjects::RecentProjects(bool persistent) : m_persistent(persistent)
{
    if (!m_persistent)
        return;
    for (const QString& entry : QSettings().value(settingsKey()).toStringList()) {
        const QString dir = normalized(entry);
        if (!entry.isEmpty() && !m_entries.contains(dir) && m_entries.size() < kMaxEntries)
            m_entries << dir;
    }
}

void RecentProjects::add(const QString& dir)
{
    const QString entry = normalized(dir);
    m_entries.removeAll(entry);
    m_entries.prepend(entry);
    while (m_entries.size() > kMaxEntries)
        m_entries.removeLast();
    store();
}

void RecentProjects::remove(const QString& dir)
{
    if (m_entries.removeAll(normalized(dir)) > 0)
        store();
}

void RecentProjects::clear()
{
    m_entries.clear();
    store();
}

void RecentProjects::store() const
{
    if (m_persistent)
        QSettings().setValue(settingsKey(), m_entries);
}

} // namespace kforge::app
