#pragma once
// The MCTS tree pane (docs/gui.md): the colour legend over a splitter holding the tree graph
// (TreeGraphView) and the sortable node list (TreeNodeList), both over the card's
// SearchTreeModel. A node chosen in either (click, Enter, a row) goes to
// Session::setCurrentNodeId; both follow Session::currentNodeChanged, so the graph, the list and
// every other pane show the same node without talking to each other.
//
// Thread: GUI thread only. Does not own the model or the session.

#include <QWidget>

class QSplitter;

namespace kforge::app {
class SearchTreeModel;
class Session;
} // namespace kforge::app

namespace kforge::views {

class SpeedupLegend;
class TreeGraphView;
class TreeNodeList;

class TreePane : public QWidget {
    Q_OBJECT
public:
    TreePane(const app::SearchTreeModel* model, app::Session* session, QWidget* parent = nullptr);

    TreeGraphView* graphView() const { return m_graph; }
    TreeNodeList* nodeList() const { return m_list; }
    SpeedupLegend* legend() const { return m_legend; }
    QSplitter* splitter() const { return m_splitter; }

    /// The graph's share of the splitter's width until the user moves the handle.
    static constexpr double kGraphShare = 0.68;

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    void followSession(const QString& id);

    app::Session* m_session;
    SpeedupLegend* m_legend;
    QSplitter* m_splitter;
    TreeGraphView* m_graph;
    TreeNodeList* m_list;
    bool m_userSplit = false; // the user moved the splitter: keep their sizes
};

} // namespace kforge::views
