#pragma once
// File > Open Model...: asks for a TorchScript file, its example inputs (shape specs or a
// torch.save file), the project folder to create, the device and the samples per card. OK is
// enabled only when the entries are plausible; the first problem is shown in one line. The capture
// itself validates again and may still fail (e.g. inputs that do not fit the model).
//
// Thread: GUI thread only.

#include "views/capture/CaptureRequest.h"

#include <QDialog>

class QComboBox;
class QDialogButtonBox;
class QLabel;
class QLineEdit;
class QRadioButton;
class QSpinBox;

namespace kforge::views {

class OpenModelDialog : public QDialog {
    Q_OBJECT
public:
    explicit OpenModelDialog(QWidget* parent = nullptr);

    CaptureRequest request() const;
    /// Prefills the fields (an inputs list naming one existing file selects the file mode).
    void setRequest(const CaptureRequest& request);
    /// The first problem with the entries, empty when OK is enabled.
    QString validationError() const;

private:
    void browseModel();
    void browseInputsFile();
    void browseOutput();
    void suggestOutputDir();
    void revalidate();
    QStringList shapeSpecs() const;

    QLineEdit* m_model;
    QRadioButton* m_shapesMode;
    QRadioButton* m_fileMode;
    QLineEdit* m_shapes;
    QLineEdit* m_inputsFile;
    QLineEdit* m_output;
    QComboBox* m_device;
    QSpinBox* m_samples;
    QLabel* m_error;
    QDialogButtonBox* m_buttons;
};

} // namespace kforge::views
