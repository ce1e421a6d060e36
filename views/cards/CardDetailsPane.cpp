#include "views/cards/CardDetailsPane.h"

#include "models/Session.h"
#include "views/cards/CardDetailsHtml.h"

#include <QTextBrowser>
#include <QVBoxLayout>

namespace kforge::views {

CardDetailsPane::CardDetailsPane(app::Session* session, QWidget* parent)
    : QWidget(parent), m_session(session), m_text(new QTextBrowser(this))
{
    m_text->setObjectName(QStringLiteral("cardDetailsText"));
    m_text->setOpenLinks(false);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_text);
    connect(m_session, &app::Session::currentCardChanged, this, &CardDetailsPane::refresh);
    connect(m_session, &app::Session::projectChanged, this, &CardDetailsPane::refresh);
    refresh();
}

QString CardDetailsPane::plainText() const
{
    return m_text->toPlainText();
}

void CardDetailsPane::refresh()
{
    if (const core::OperatorCard* card = m_session->currentCard()) {
        m_text->setHtml(cardDetailsHtml(*card));
        return;
    }
    const QString hint = m_session->hasProject() ? tr("Select a card to see its details.") : tr("No project is open.");
    m_text->setHtml(QStringLiteral("<p><i>%1</i></p>").arg(hint.toHtmlEscaped()));
}

} // namespace kforge::views
