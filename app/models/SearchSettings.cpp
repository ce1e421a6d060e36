#include "models/SearchSettings.h"

#include <QRegularExpression>

namespace kforge::app {

namespace {

const QString kGroup = QStringLiteral("search/");

} // namespace

QString SearchSettings::validate() const
{
    if (proposer != QStringLiteral("builtin") && proposer != QStringLiteral("openai") &&
        proposer != QStringLiteral("anthropic"))
        return QStringLiteral("proposer: expected builtin, openai or anthropic, got '%1'").arg(proposer);
    if (iterations < 1)
        return QStringLiteral("iterations: at least 1");
    if (timeLimitS < 0)
        return QStringLiteral("time limit: seconds >= 0 (0: none)");
    if (evaluateTimeoutS <= 0)
        return QStringLiteral("evaluation timeout: seconds > 0");
    static const QRegularExpression gpuList(QStringLiteral("^\\s*\\d+\\s*(,\\s*\\d+\\s*)*$"));
    if (!gpus.trimmed().isEmpty() && !gpuList.match(gpus).hasMatch())
        return QStringLiteral("GPUs: numbers separated by commas (e.g. 0,2), or empty for every visible GPU");
    if (!usesLlm())
        return {};
    if (model.trimmed().isEmpty())
        return QStringLiteral("model: required for %1").arg(proposer);
    static const QRegularExpression envName(QStringLiteral("^[A-Za-z_][A-Za-z0-9_]*$"));
    if (!apiKeyEnv.isEmpty() && !envName.match(apiKeyEnv).hasMatch())
        // The text is not echoed: a key pasted here by mistake must not be shown.
        return QStringLiteral(
            "API key variable: expected a variable name such as OPENAI_API_KEY (never the key itself)");
    if (!baseUrl.isEmpty() && !baseUrl.startsWith(QStringLiteral("http://")) &&
        !baseUrl.startsWith(QStringLiteral("https://")))
        return QStringLiteral("endpoint: an http:// or https:// URL");
    return {};
}

SearchSettings SearchSettings::load(const QSettings& settings)
{
    SearchSettings s;
    s.proposer = settings.value(kGroup + QStringLiteral("proposer"), s.proposer).toString();
    s.baseUrl = settings.value(kGroup + QStringLiteral("baseUrl"), s.baseUrl).toString();
    s.model = settings.value(kGroup + QStringLiteral("model"), s.model).toString();
    s.apiKeyEnv = settings.value(kGroup + QStringLiteral("apiKeyEnv"), s.apiKeyEnv).toString();
    s.iterations = settings.value(kGroup + QStringLiteral("iterations"), s.iterations).toInt();
    s.timeLimitS = settings.value(kGroup + QStringLiteral("timeLimitS"), s.timeLimitS).toDouble();
    s.evaluateTimeoutS = settings.value(kGroup + QStringLiteral("evaluateTimeoutS"), s.evaluateTimeoutS).toDouble();
    s.gpus = settings.value(kGroup + QStringLiteral("gpus"), s.gpus).toString();
    return s;
}

void SearchSettings::save(QSettings& settings) const
{
    settings.setValue(kGroup + QStringLiteral("proposer"), proposer);
    settings.setValue(kGroup + QStringLiteral("baseUrl"), baseUrl);
    settings.setValue(kGroup + QStringLiteral("model"), model);
    settings.setValue(kGroup + QStringLiteral("apiKeyEnv"), apiKeyEnv);
    settings.setValue(kGroup + QStringLiteral("iterations"), iterations);
    settings.setValue(kGroup + QStringLiteral("timeLimitS"), timeLimitS);
    settings.setValue(kGroup + QStringLiteral("evaluateTimeoutS"), evaluateTimeoutS);
    settings.setValue(kGroup + QStringLiteral("gpus"), gpus);
}

} // namespace kforge::app
