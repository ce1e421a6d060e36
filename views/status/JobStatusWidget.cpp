#include "views/status/JobStatusWidget.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>

namespace kforge::views {

JobStatusWidget::JobStatusWidget(QWidget* parent)
    : QWidget(parent), m_label(new QLabel(this)), m_progress(new QProgressBar(this)),
      m_cancel(new QPushButton(tr("Cancel"), this))
{
    m_label->setObjectName(QStringLiteral("jobLabel"));
    m_progress->setObjectName(QStringLiteral("jobProgress"));
    m_cancel->setObjectName(QStringLiteral("jobCancel"));
    m_progress->setMaximumWidth(260);
    m_progress->setTextVisible(true);
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_label);
    layout->addWidget(m_progress);
    layout->addWidget(m_cancel);
    connect(m_cancel, &QPushButton::clicked, this, &JobStatusWidget::cancelRequested);
    endJob(tr("No job running"));
}

void JobStatusWidget::beginJob(const QString& title)
{
    m_title = title;
    m_label->setText(title);
    m_label->setToolTip(QString());
    m_progress->setRange(0, 0);
    m_progress->setFormat(QString());
    m_cancel->setEnabled(true);
    m_progress->show();
    m_cancel->show();
}

void JobStatusWidget::setProgress(const QString& phase, int done, int total)
{
    if (m_cancel->isEnabled())
        m_label->setText(m_title + QStringLiteral(": ") + phase);
    if (total > 0) {
        m_progress->setRange(0, total);
        m_progress->setValue(qMin(done, total));
        m_progress->setFormat(QStringLiteral("%1 %v/%m").arg(phase));
    } else {
        m_progress->setRange(0, 0);
    }
}

void JobStatusWidget::setCancelling()
{
    m_cancel->setEnabled(false);
    m_label->setText(m_title + QStringLiteral(": ") + tr("cancelling..."));
}

void JobStatusWidget::endJob(const QString& message)
{
    m_label->setText(message);
    m_label->setToolTip(message); // the whole text where the status bar has no room for it
    m_progress->hide();
    m_cancel->hide();
}

bool JobStatusWidget::isJobVisible() const
{
    return !m_cancel->isHidden();
}

QString JobStatusWidget::labelText() const
{
    return m_label->text();
}

} // namespace kforge::views
