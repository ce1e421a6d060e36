#pragma once
// Read-only details of the session's current card (see cardDetailsHtml); a hint when none is
// current.
//
// Thread: GUI thread only. Observes the session; does not own it.

#include <QWidget>

class QTextBrowser;

namespace kforge::app {
class Session;
}

namespace kforge::views {

class CardDetailsPane : public QWidget {
    Q_OBJECT
public:
    explicit CardDetailsPane(app::Session* session, QWidget* parent = nullptr);

    /// The text as shown (for tests and accessibility).
    QString plainText() const;

private:
    void refresh();

    app::Session* m_session;
    QTextBrowser* m_text;
};

} // namespace kforge::views
