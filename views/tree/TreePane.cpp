#include "views/tree/TreePane.h"

#include "models/Session.h"
#include "views/tree/SpeedupLegend.h"
#include "views/tree/TreeGraphView.h"
#include "views/tree/TreeNodeList.h"

#include <QSplitter>
#include <QVBoxLayout>

namespace kforge::views {

TreePane::TreePane(const app::SearchTreeModel* model, app::Session* session, QWidget* parent)
    : QWidget(parent), m_session(session), m_legend(new SpeedupLegend(this)),
      m_splitter(new QSplitter(Qt::Horizontal, this)), m_graph(new TreeGraphView(m_splitter)),
      m_list(new TreeNodeList(model, m_splitter))
{
    setObjectName(QStringLiteral("treePane"));
    m_splitter->setObjectName(QStringLiteral("treeSplitter"));
    m_splitter->addWidget(m_graph);
    m_splitter->addWidget(m_list);
    m_splitter->setStretchFactor(0, 3);
    m_splitter->setStretchFactor(1, 2);
    m_splitter->setChildrenCollapsible(true);
    m_graph->setModel(model);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 2, 4, 4);
    layout->setSpacing(2);
    layout->addWidget(m_legend);
    layout->addWidget(m_splitter, 1);

    connect(m_graph, &TreeGraphView::nodeSelected, m_session, &app::Session::setCurrentNodeId);
    connect(m_list, &TreeNodeList::nodeSelected, m_session, &app::Session::setCurrentNodeId);
    connect(m_session, &app::Session::currentNodeChanged, this, &TreePane::followSession);
    connect(m_splitter, &QSplitter::splitterMoved, this, [this] { m_userSplit = true; });
}

void TreePane::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    // The list's size hint (its columns) would take half the pane; the graph needs the room.
    if (!m_userSplit) {
        const int width = m_splitter->width();
        const int graph = static_cast<int>(width * kGraphShare);
        m_splitter->setSizes({graph, width - graph});
    }
}

void TreePane::followSession(const QString& id)
{
    m_graph->selectNode(id);
    m_list->selectNode(id);
}

} // namespace kforge::views
