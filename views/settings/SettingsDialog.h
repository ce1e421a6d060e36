#pragma once
// Run > Settings: the proposer and its endpoint, model and API key variable (the variable's NAME;
// the dialog says whether it is set in this process's environment, never its value), and the
// budget per card. OK is enabled only while the settings validate; the reason is shown.
//
// Thread: GUI thread only.

#include "models/SearchSettings.h"

#include <QDialog>

class QComboBox;
class QDialogButtonBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace kforge::views {

class SettingsDialog : public QDialog {
    Q_OBJECT
public:
    explicit SettingsDialog(const app::SearchSettings& settings, QWidget* parent = nullptr);

    /// The settings as edited.
    app::SearchSettings settings() const;
    /// "" when valid, else the line shown in the dialog.
    QString problem() const;

private:
    void refresh();

    QComboBox* m_proposer;
    QLineEdit* m_baseUrl;
    QLineEdit* m_model;
    QLineEdit* m_apiKeyEnv;
    QLabel* m_keyStatus;
    QSpinBox* m_iterations;
    QDoubleSpinBox* m_timeLimit;
    QDoubleSpinBox* m_timeout;
    QLineEdit* m_gpus;
    QLabel* m_problem;
    QDialogButtonBox* m_buttons;
};

} // namespace kforge::views
