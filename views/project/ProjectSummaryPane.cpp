#include "views/project/ProjectSummaryPane.h"

#include "models/Session.h"

#include <QTextBrowser>
#include <QVBoxLayout>

namespace kforge::views {
namespace {

QString esc(const std::string& text)
{
    return QString::fromStdString(text).toHtmlEscaped();
}

QString row(const QString& name, const QString& value)
{
    return QStringLiteral("<tr><td><b>%1</b></td><td>%2</td></tr>").arg(name.toHtmlEscaped(), value);
}

} // namespace

ProjectSummaryPane::ProjectSummaryPane(app::Session* session, QWidget* parent)
    : QWidget(parent), m_session(session), m_text(new QTextBrowser(this))
{
    m_text->setObjectName(QStringLiteral("projectSummaryText"));
    m_text->setOpenLinks(false);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_text);
    connect(m_session, &app::Session::projectChanged, this, &ProjectSummaryPane::refresh);
    refresh();
}

QString ProjectSummaryPane::plainText() const
{
    return m_text->toPlainText();
}

void ProjectSummaryPane::refresh()
{
    const auto& project = m_session->project();
    if (!project) {
        m_text->setHtml(
            QStringLiteral("<h2>%1</h2><p>%2</p><p>%3</p>")
                .arg(tr("No project is open").toHtmlEscaped(),
                     tr("File > Open Project... opens a captured project folder.").toHtmlEscaped(),
                     tr("File > Open Model... captures a TorchScript model into a new project.").toHtmlEscaped()));
        return;
    }
    const core::CaptureInfo& c = project->capture;
    QString device = esc(c.device);
    if (!c.deviceName.empty() && c.deviceName != c.device)
        device += QStringLiteral(" (") + esc(c.deviceName) + QStringLiteral(")");
    QString rows;
    rows += row(tr("Folder"), m_session->projectDir().toHtmlEscaped());
    rows += row(tr("Model"), esc(c.modelPath));
    rows += row(tr("Inputs"), esc(c.inputs));
    rows += row(tr("Device"), device);
    rows += row(tr("Captured"),
                esc(c.createdUtc) + QStringLiteral(" with Kernel Forge ") + esc(c.kforgeVersion) +
                    QStringLiteral(", torch ") + esc(c.torchVersion));
    rows += row(tr("Calls"),
                tr("%1 top-level ATen calls, %2 outside aten (not carded)").arg(c.totalCalls).arg(c.ignoredCalls));
    rows += row(tr("Cards"), QString::number(project->cards.size()));
    rows += row(tr("Eager total"), QStringLiteral("%1 \u00b5s").arg(c.totalEagerUs, 0, 'f', 1));
    rows += row(tr("Samples"), tr("up to %1 per card").arg(c.samplesPerCard));
    QString html =
        QStringLiteral("<h2>%1</h2><table cellpadding=\"2\">%2</table>").arg(tr("Project").toHtmlEscaped(), rows);
    if (c.device == "cpu")
        html +=
            QStringLiteral("<p><i>%1</i></p>")
                .arg(tr("Captured on the CPU: latencies are CPU wall-clock times, indicative only (a busy host moves "
                        "them), not GPU times.")
                         .toHtmlEscaped());
    m_text->setHtml(html);
}

} // namespace kforge::views
