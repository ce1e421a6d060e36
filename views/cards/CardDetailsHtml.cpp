#include "views/cards/CardDetailsHtml.h"

#include <QCoreApplication>
#include <QStringList>

namespace kforge::views {
namespace {

constexpr int kMaxListedPositions = 16;

QString esc(const std::string& text)
{
    return QString::fromStdString(text).toHtmlEscaped();
}

QString tr(const char* text)
{
    return QCoreApplication::translate("kforge::views::CardDetails", text);
}

QString section(const QString& title)
{
    return QStringLiteral("<h3>%1</h3>").arg(title.toHtmlEscaped());
}

QString row(const QStringList& cells, bool header = false)
{
    const QString tag = header ? QStringLiteral("th") : QStringLiteral("td");
    QString html = QStringLiteral("<tr>");
    for (const QString& cell : cells)
        html += QStringLiteral("<%1 align=\"left\">%2</%1>").arg(tag, cell);
    return html + QStringLiteral("</tr>");
}

QString table(const QString& rows)
{
    return QStringLiteral(
               "<table cellspacing=\"0\" cellpadding=\"3\" border=\"1\" style=\"border-collapse:collapse\">") +
        rows + QStringLiteral("</table>");
}

QString tensorText(const core::TensorSpec& t)
{
    return esc(t.toShortString()) + QStringLiteral(" @ ") + esc(t.device);
}

QString argValueText(const core::ArgSpec& arg)
{
    switch (arg.kind) {
    case core::ArgKind::Tensor:
    case core::ArgKind::TensorList: {
        QStringList parts;
        for (const core::TensorSpec& t : arg.tensors)
            parts << tensorText(t);
        return arg.kind == core::ArgKind::Tensor
            ? parts.join(QStringLiteral(", "))
            : QStringLiteral("[") + parts.join(QStringLiteral(", ")) + QStringLiteral("]");
    }
    case core::ArgKind::Value:
        return esc(arg.value.dump());
    case core::ArgKind::None:
        return QStringLiteral("None");
    case core::ArgKind::Opaque:
        return QStringLiteral("&lt;") + esc(arg.value.is_string() ? arg.value.get<std::string>() : arg.value.dump()) +
            QStringLiteral("&gt;");
    }
    return {};
}

QString callPositionsText(const std::vector<std::int64_t>& positions)
{
    QStringList parts;
    for (size_t i = 0; i < positions.size() && i < kMaxListedPositions; ++i)
        parts << QString::number(positions[i]);
    if (positions.size() > kMaxListedPositions)
        parts << tr("... (%1 more)").arg(positions.size() - kMaxListedPositions);
    return parts.join(QStringLiteral(", "));
}

QString argsSection(const core::OperatorCard& card)
{
    QString html = section(tr("Arguments"));
    if (card.args.empty())
        return html + QStringLiteral("<p>") + tr("none") + QStringLiteral("</p>");
    QString rows = row({tr("name"), tr("type"), tr("kind"), tr("value")}, true);
    for (const core::ArgSpec& arg : card.args)
        rows +=
            row({esc(arg.name), esc(arg.type), QString::fromLatin1(core::argKindName(arg.kind)), argValueText(arg)});
    return html + table(rows);
}

QString outputsSection(const core::OperatorCard& card)
{
    QString html = section(tr("Outputs"));
    if (card.outputs.empty())
        return html + QStringLiteral("<p>") + tr("no tensor output") + QStringLiteral("</p>");
    QString rows;
    for (size_t i = 0; i < card.outputs.size(); ++i)
        rows += row({QString::number(i), tensorText(card.outputs[i])});
    return html + table(rows);
}

QString samplesSection(const core::OperatorCard& card)
{
    QString html = section(tr("Samples (%1)").arg(card.samples.size()));
    if (!card.samples.empty()) {
        QString rows = row({tr("call"), tr("file"), tr("bytes")}, true);
        for (const core::SampleRef& s : card.samples)
            rows += row({QString::number(s.callPosition), esc(s.file), QString::number(s.bytes)});
        html += table(rows);
    }
    if (!card.samplesNote.empty())
        html += QStringLiteral("<p><i>") + esc(card.samplesNote) + QStringLiteral("</i></p>");
    else if (card.samples.empty())
        html += QStringLiteral("<p>") + tr("none saved") + QStringLiteral("</p>");
    return html;
}

QString eagerSection(const core::OperatorCard& card)
{
    QString html = section(tr("Eager timing"));
    if (!card.eager) {
        return html + QStringLiteral("<p>") + tr("not timed") +
            (card.eagerNote.empty() ? QString() : QStringLiteral(": ") + esc(card.eagerNote)) + QStringLiteral("</p>");
    }
    const core::EagerTiming& e = *card.eager;
    QString rows;
    rows += row({tr("median"), QStringLiteral("%1 \u00b5s").arg(e.medianUs, 0, 'f', 2)});
    rows += row({tr("quartiles"), QStringLiteral("%1 .. %2 \u00b5s").arg(e.q1Us, 0, 'f', 2).arg(e.q3Us, 0, 'f', 2)});
    rows += row({tr("repetitions"), QString::number(e.repetitions)});
    // A CPU wall clock follows whatever else the host runs: the ranking it gives is indicative only.
    rows +=
        row({tr("method"),
             esc(e.method) + (e.device.rfind("cpu", 0) == 0 ? tr(" (indicative: a busy host moves it)") : QString())});
    rows += row({tr("device"), esc(e.device)});
    rows += row({tr("all calls"),
                 QStringLiteral("%1 \u00b5s, %2 % of model time")
                     .arg(card.totalEagerUs(), 0, 'f', 2)
                     .arg(card.timeShare * 100.0, 0, 'f', 1)});
    return html + table(rows);
}

} // namespace

QString cardDetailsHtml(const core::OperatorCard& card)
{
    QString html = QStringLiteral("<h2>") + esc(card.displayName()) + QStringLiteral("</h2>");
    html += QStringLiteral("<p>") + tr("card") + QStringLiteral(" <tt>") + esc(card.id) + QStringLiteral("</tt>");
    if (card.vendorBacked)
        html += QStringLiteral(" &middot; ") + tr("vendor-backed (cuBLAS/cuDNN)");
    html += QStringLiteral("</p>");
    html += section(tr("Schema")) + QStringLiteral("<p><tt>") + esc(card.schema) + QStringLiteral("</tt></p>");
    if (card.region) {
        QString lines;
        for (size_t m = 0; m < card.region->members.size(); ++m)
            lines += esc(card.region->memberText(m)) + QStringLiteral("<br>");
        lines += esc(card.region->outputsText());
        html += section(tr("Fused region (%1 ops, run as eager runs them)").arg(card.region->members.size())) +
            QStringLiteral("<p><tt>") + lines + QStringLiteral("</tt></p>");
    }
    html += argsSection(card);
    html += outputsSection(card);
    html += section(tr("Calls (%1)").arg(card.callCount)) + QStringLiteral("<p>") + tr("execution positions: ") +
        callPositionsText(card.callPositions) + QStringLiteral("</p>");
    html += samplesSection(card);
    html += eagerSection(card);
    return html;
}

} // namespace kforge::views
