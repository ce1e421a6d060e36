#include "views/editor/AssemblyView.h"

#include <QFontDatabase>
#include <QLabel>
#include <QPlainTextEdit>
#include <QSplitter>
#include <QVBoxLayout>

namespace kforge::views {

namespace {

QPlainTextEdit* listingView(const QString& objectName, QWidget* parent)
{
    auto* view = new QPlainTextEdit(parent);
    view->setObjectName(objectName);
    view->setReadOnly(true);
    view->setLineWrapMode(QPlainTextEdit::NoWrap);
    view->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    view->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
    return view;
}

QWidget* titled(const QString& title, QWidget* child, QWidget* parent)
{
    auto* box = new QWidget(parent);
    auto* layout = new QVBoxLayout(box);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(new QLabel(title, box));
    layout->addWidget(child, 1);
    return box;
}

} // namespace

AssemblyView::AssemblyView(QWidget* parent)
    : QWidget(parent), m_message(new QLabel(this)), m_ptx(listingView(QStringLiteral("ptxView"), this)),
      m_sass(listingView(QStringLiteral("sassView"), this))
{
    m_message->setObjectName(QStringLiteral("assemblyMessage"));
    m_message->setTextFormat(Qt::PlainText);
    m_message->setWordWrap(true);
    m_message->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* splitter = new QSplitter(Qt::Horizontal, this);
    splitter->addWidget(titled(tr("PTX"), m_ptx, splitter));
    splitter->addWidget(titled(tr("SASS (nvdisasm)"), m_sass, splitter));
    splitter->setChildrenCollapsible(false);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_message);
    layout->addWidget(splitter, 1);
}

void AssemblyView::clear(const QString& message)
{
    setListing(QString(), QString(), message);
}

void AssemblyView::setListing(const QString& ptx, const QString& sass, const QString& message)
{
    m_ptx->setPlainText(ptx);
    m_sass->setPlainText(sass);
    m_message->setText(message);
}

QString AssemblyView::ptx() const
{
    return m_ptx->toPlainText();
}

QString AssemblyView::sass() const
{
    return m_sass->toPlainText();
}

QString AssemblyView::message() const
{
    return m_message->text();
}

} // namespace kforge::views
