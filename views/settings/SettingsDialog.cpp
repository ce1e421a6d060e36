#include "views/settings/SettingsDialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

namespace kforge::views {

namespace {

// The variable a provider's key is read from when the field is left empty.
QString defaultKeyVariable(const QString& proposer)
{
    return proposer == QStringLiteral("anthropic") ? QStringLiteral("ANTHROPIC_API_KEY")
                                                   : QStringLiteral("OPENAI_API_KEY");
}

} // namespace

SettingsDialog::SettingsDialog(const app::SearchSettings& settings, QWidget* parent) : QDialog(parent)
{
    setObjectName(QStringLiteral("settingsDialog"));
    setWindowTitle(tr("Search Settings"));
    m_proposer = new QComboBox(this);
    m_proposer->setObjectName(QStringLiteral("settingsProposer"));
    m_proposer->addItem(tr("Built-in (offline)"), QStringLiteral("builtin"));
    m_proposer->addItem(tr("OpenAI-compatible (OpenAI, vLLM, Ollama, llama.cpp)"), QStringLiteral("openai"));
    m_proposer->addItem(tr("Anthropic"), QStringLiteral("anthropic"));
    m_proposer->setCurrentIndex(std::max(0, m_proposer->findData(settings.proposer)));
    m_baseUrl = new QLineEdit(settings.baseUrl, this);
    m_baseUrl->setObjectName(QStringLiteral("settingsBaseUrl"));
    m_baseUrl->setPlaceholderText(tr("the provider's public endpoint"));
    m_model = new QLineEdit(settings.model, this);
    m_model->setObjectName(QStringLiteral("settingsModel"));
    m_apiKeyEnv = new QLineEdit(settings.apiKeyEnv, this);
    m_apiKeyEnv->setObjectName(QStringLiteral("settingsApiKeyEnv"));
    m_apiKeyEnv->setToolTip(tr("The NAME of an environment variable that holds the key. The key itself is never "
                               "entered, stored or shown here."));
    m_keyStatus = new QLabel(this);
    m_keyStatus->setObjectName(QStringLiteral("settingsKeyStatus"));
    m_iterations = new QSpinBox(this);
    m_iterations->setObjectName(QStringLiteral("settingsIterations"));
    m_iterations->setRange(1, 100000);
    m_iterations->setValue(settings.iterations);
    m_timeLimit = new QDoubleSpinBox(this);
    m_timeLimit->setObjectName(QStringLiteral("settingsTimeLimit"));
    m_timeLimit->setRange(0, 7 * 24 * 3600);
    m_timeLimit->setSuffix(tr(" s"));
    m_timeLimit->setSpecialValueText(tr("none"));
    m_timeLimit->setValue(settings.timeLimitS);
    m_timeout = new QDoubleSpinBox(this);
    m_timeout->setObjectName(QStringLiteral("settingsTimeout"));
    m_timeout->setRange(1, 3600);
    m_timeout->setSuffix(tr(" s"));
    m_timeout->setValue(settings.evaluateTimeoutS);
    m_gpus = new QLineEdit(settings.gpus, this);
    m_gpus->setObjectName(QStringLiteral("settingsGpus"));
    m_gpus->setPlaceholderText(tr("every visible GPU"));
    m_gpus->setToolTip(tr("One worker per GPU, numbered among the visible GPUs (e.g. 0,2); with more than one, "
                          "candidates are evaluated in parallel."));
    m_problem = new QLabel(this);
    m_problem->setObjectName(QStringLiteral("settingsProblem"));
    m_problem->setWordWrap(true);
    m_buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);

    auto* form = new QFormLayout;
    form->addRow(tr("Proposer"), m_proposer);
    form->addRow(tr("Endpoint"), m_baseUrl);
    form->addRow(tr("Model"), m_model);
    form->addRow(tr("API key variable"), m_apiKeyEnv);
    form->addRow(QString(), m_keyStatus);
    form->addRow(tr("Iterations per card"), m_iterations);
    form->addRow(tr("Time limit per card"), m_timeLimit);
    form->addRow(tr("Evaluation timeout"), m_timeout);
    form->addRow(tr("GPUs"), m_gpus);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(m_problem);
    layout->addWidget(m_buttons);

    connect(m_buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_proposer, &QComboBox::currentIndexChanged, this, &SettingsDialog::refresh);
    for (QLineEdit* edit : {m_baseUrl, m_model, m_apiKeyEnv})
        connect(edit, &QLineEdit::textChanged, this, &SettingsDialog::refresh);
    refresh();
}

app::SearchSettings SettingsDialog::settings() const
{
    app::SearchSettings s;
    s.proposer = m_proposer->currentData().toString();
    s.baseUrl = m_baseUrl->text().trimmed();
    s.model = m_model->text().trimmed();
    s.apiKeyEnv = m_apiKeyEnv->text().trimmed();
    s.iterations = m_iterations->value();
    s.timeLimitS = m_timeLimit->value();
    s.evaluateTimeoutS = m_timeout->value();
    s.gpus = m_gpus->text().trimmed();
    return s;
}

QString SettingsDialog::problem() const
{
    return settings().validate();
}

void SettingsDialog::refresh()
{
    const app::SearchSettings s = settings();
    for (QWidget* w :
         {static_cast<QWidget*>(m_baseUrl), static_cast<QWidget*>(m_model), static_cast<QWidget*>(m_apiKeyEnv)})
        w->setEnabled(s.usesLlm());
    if (s.usesLlm()) {
        const QString variable = s.apiKeyEnv.isEmpty() ? defaultKeyVariable(s.proposer) : s.apiKeyEnv;
        m_apiKeyEnv->setPlaceholderText(defaultKeyVariable(s.proposer));
        const bool set = !qEnvironmentVariableIsEmpty(variable.toLocal8Bit().constData());
        m_keyStatus->setText(set ? tr("%1 is set in this environment").arg(variable)
                                 : tr("%1 is not set: a run will stop with that error").arg(variable));
    } else {
        m_keyStatus->setText(tr("the built-in proposer needs no network and no key"));
    }
    const QString why = s.validate();
    m_problem->setText(why);
    m_problem->setVisible(!why.isEmpty());
    m_buttons->button(QDialogButtonBox::Ok)->setEnabled(why.isEmpty());
}

} // namespace kforge::views
