#pragma once
// The Project dock (tabbed with Card Details): what the open project captured (model, inputs, device,
// versions, call and card counts, total eager time), or how to open one when none is open.
//
// Thread: GUI thread only. Observes the session; does not own it.

#include <QWidget>

class QTextBrowser;

namespace kforge::app {
class Session;
}

namespace kforge::views {

class ProjectSummaryPane : public QWidget {
    Q_OBJECT
public:
    explicit ProjectSummaryPane(app::Session* session, QWidget* parent = nullptr);

    QString plainText() const;

private:
    void refresh();

    app::Session* m_session;
    QTextBrowser* m_text;
};

} // namespace kforge::views
