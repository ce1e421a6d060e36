#include "models/Session.h"

#include <QThread>

#include <algorithm>

namespace kforge::app {

Session::Session(QObject* parent) : QObject(parent)
{
}

void Session::setProject(std::shared_ptr<const core::Project> project, const QString& dir)
{
    Q_ASSERT(QThread::currentThread() == thread());
    setCurrentCardId(QString());
    m_project = std::move(project);
    m_projectDir = m_project ? dir : QString();
    Q_EMIT projectChanged();
}

const core::OperatorCard* Session::currentCard() const
{
    if (!m_project || m_currentCardId.isEmpty())
        return nullptr;
    const std::string id = m_currentCardId.toStdString();
    for (const core::OperatorCard& card : m_project->cards) {
        if (card.id == id)
            return &card;
    }
    return nullptr;
}

void Session::setCurrentCardId(const QString& id)
{
    Q_ASSERT(QThread::currentThread() == thread());
    QString next = id;
    if (!next.isEmpty()) {
        // Only exact, full ids: a prefix match could silently pick a different card.
        const std::string wanted = next.toStdString();
        const bool known = m_project &&
            std::any_of(m_project->cards.begin(), m_project->cards.end(),
                        [&](const core::OperatorCard& c) { return c.id == wanted; });
        if (!known)
            next.clear();
    }
    if (next == m_currentCardId)
        return;
    setCurrentNodeId(QString());
    m_currentCardId = next;
    Q_EMIT currentCardChanged(m_currentCardId);
}

void Session::setCurrentNodeId(const QString& id)
{
    Q_ASSERT(QThread::currentThread() == thread());
    if (id == m_currentNodeId)
        return;
    m_currentNodeId = id;
    Q_EMIT currentNodeChanged(m_currentNodeId);
}

} // namespace kforge::app
