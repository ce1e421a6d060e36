#pragma once
// The most recently opened project folders, newest first, at most kMaxEntries, kept in QSettings
// (key kSettingsKey of the application's default QSettings) when persistent, in memory otherwise.
//
// Thread: GUI thread only.

#include <QStringList>

namespace kforge::app {

class RecentProjects {
public:
    static constexpr int kMaxEntries = 8;
    static constexpr const char* kSettingsKey = "recentProjects";

    /// A persistent list starts from what QSettings holds.
    explicit RecentProjects(bool persistent);

    const QStringList& entries() const { return m_entries; }
    /// Puts `dir` first (as an absolute, clean path), dropping an older entry for it and the oldest
    /// entries beyond kMaxEntries.
    void add(const QString& dir);
    void remove(const QString& dir);
    void clear();

private:
    void store() const;

    bool m_persistent;
    QStringList m_entries;
};

} // namespace kforge::app
