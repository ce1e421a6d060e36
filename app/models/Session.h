#pragma once
// The one place where the GUI's shared state lives: the open project and the current card. Panes
// observe it and never talk to each other (docs/architecture.md).
//
// Thread: GUI thread only (asserted). The project is an immutable value shared with whoever holds
// it; a new project replaces it wholesale.

#include "model/Project.h"

#include <QObject>
#include <QString>

#include <memory>

namespace kforge::app {

class Session : public QObject {
    Q_OBJECT
public:
    explicit Session(QObject* parent = nullptr);

    /// The open project, or null when none is open.
    const std::shared_ptr<const core::Project>& project() const { return m_project; }
    /// The folder the open project was read from (empty when none is open).
    const QString& projectDir() const { return m_projectDir; }
    bool hasProject() const { return m_project != nullptr; }

    /// Replaces the open project (null closes it). Clears the current card first, so observers
    /// never see a current card that is not in the current project.
    void setProject(std::shared_ptr<const core::Project> project, const QString& dir);

    /// Full 16-digit id of the current card, empty when none.
    const QString& currentCardId() const { return m_currentCardId; }
    /// The current card of the open project, or null.
    const core::OperatorCard* currentCard() const;
    /// Makes `id` current; an id not in the open project clears the selection instead.
    void setCurrentCardId(const QString& id);

    /// Id of the current search-tree node of the current card ("n12"), empty when none. Cleared
    /// whenever the current card changes; the tree pane checks ids against the card's tree.
    const QString& currentNodeId() const { return m_currentNodeId; }
    void setCurrentNodeId(const QString& id);

Q_SIGNALS:
    void projectChanged();
    void currentCardChanged(const QString& id);
    void currentNodeChanged(const QString& id);

private:
    std::shared_ptr<const core::Project> m_project;
    QString m_projectDir;
    QString m_currentCardId;
    QString m_currentNodeId;
};

} // namespace kforge::app
