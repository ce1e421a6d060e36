#include "views/capture/OpenModelDialog.h"

#include "model/InputSpec.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRadioButton>
#include <QRegularExpression>
#include <QSpinBox>
#include <QVBoxLayout>

namespace kforge::views {
namespace {

QWidget* withBrowseButton(QLineEdit* edit, QPushButton* button)
{
    auto* box = new QWidget;
    auto* layout = new QHBoxLayout(box);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(edit, 1);
    layout->addWidget(button);
    return box;
}

} // namespace

OpenModelDialog::OpenModelDialog(QWidget* parent)
    : QDialog(parent), m_model(new QLineEdit), m_shapesMode(new QRadioButton(tr("Shape specs"))),
      m_fileMode(new QRadioButton(tr("torch.save file"))), m_shapes(new QLineEdit), m_inputsFile(new QLineEdit),
      m_output(new QLineEdit), m_device(new QComboBox), m_samples(new QSpinBox), m_error(new QLabel),
      m_buttons(new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel))
{
    setWindowTitle(tr("Open Model"));
    m_model->setObjectName(QStringLiteral("modelPath"));
    m_shapesMode->setObjectName(QStringLiteral("inputsShapesMode"));
    m_fileMode->setObjectName(QStringLiteral("inputsFileMode"));
    m_shapes->setObjectName(QStringLiteral("inputsShapes"));
    m_inputsFile->setObjectName(QStringLiteral("inputsFile"));
    m_output->setObjectName(QStringLiteral("outputDir"));
    m_device->setObjectName(QStringLiteral("device"));
    m_samples->setObjectName(QStringLiteral("samplesPerCard"));
    m_error->setObjectName(QStringLiteral("validationError"));

    m_model->setPlaceholderText(tr("model.pt (torch.jit.trace or torch.jit.script, then .save)"));
    m_shapes->setPlaceholderText(tr("one per input, e.g. 8x3x224x224:float16 4x512:int64[0,32000)"));
    m_inputsFile->setPlaceholderText(tr("a tensor or a tuple/list of tensors saved with torch.save"));
    m_output->setPlaceholderText(tr("a new or empty folder"));
    m_device->addItems({QStringLiteral("auto"), QStringLiteral("cpu"), QStringLiteral("cuda")});
    m_device->setToolTip(tr("auto: the first CUDA device when one is usable, else the CPU"));
    m_samples->setRange(0, 64);
    m_samples->setValue(2);
    m_samples->setToolTip(tr("real input/output samples saved per card"));
    m_shapesMode->setChecked(true);
    m_inputsFile->setEnabled(false);
    m_error->setWordWrap(true);
    m_error->setStyleSheet(QStringLiteral("color: #b00020;"));

    auto* modelBrowse = new QPushButton(tr("Browse..."));
    auto* inputsBrowse = new QPushButton(tr("Browse..."));
    auto* outputBrowse = new QPushButton(tr("Browse..."));
    inputsBrowse->setEnabled(false);

    auto* modes = new QHBoxLayout;
    modes->addWidget(m_shapesMode);
    modes->addWidget(m_fileMode);
    modes->addStretch(1);

    auto* form = new QFormLayout;
    form->addRow(tr("TorchScript model:"), withBrowseButton(m_model, modelBrowse));
    form->addRow(tr("Inputs:"), modes);
    form->addRow(QString(), m_shapes);
    form->addRow(QString(), withBrowseButton(m_inputsFile, inputsBrowse));
    form->addRow(tr("Project folder:"), withBrowseButton(m_output, outputBrowse));
    form->addRow(tr("Device:"), m_device);
    form->addRow(tr("Samples per card:"), m_samples);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(m_error);
    layout->addWidget(m_buttons);
    m_buttons->button(QDialogButtonBox::Ok)->setText(tr("Capture"));
    resize(640, sizeHint().height());

    connect(m_buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(modelBrowse, &QPushButton::clicked, this, &OpenModelDialog::browseModel);
    connect(inputsBrowse, &QPushButton::clicked, this, &OpenModelDialog::browseInputsFile);
    connect(outputBrowse, &QPushButton::clicked, this, &OpenModelDialog::browseOutput);
    connect(m_fileMode, &QRadioButton::toggled, this, [this, inputsBrowse](bool fileMode) {
        m_shapes->setEnabled(!fileMode);
        m_inputsFile->setEnabled(fileMode);
        inputsBrowse->setEnabled(fileMode);
        revalidate();
    });
    connect(m_model, &QLineEdit::editingFinished, this, &OpenModelDialog::suggestOutputDir);
    for (QLineEdit* edit : {m_model, m_shapes, m_inputsFile, m_output})
        connect(edit, &QLineEdit::textChanged, this, &OpenModelDialog::revalidate);
    revalidate();
}

CaptureRequest OpenModelDialog::request() const
{
    CaptureRequest r;
    r.modelPath = m_model->text().trimmed();
    r.inputs = m_fileMode->isChecked() ? QStringList{m_inputsFile->text().trimmed()} : shapeSpecs();
    r.outputDir = m_output->text().trimmed();
    r.device = m_device->currentText();
    r.samplesPerCard = m_samples->value();
    return r;
}

void OpenModelDialog::setRequest(const CaptureRequest& request)
{
    m_model->setText(request.modelPath);
    const bool file = request.inputs.size() == 1 && QFileInfo(request.inputs.front()).isFile();
    (file ? m_fileMode : m_shapesMode)->setChecked(true);
    if (file)
        m_inputsFile->setText(request.inputs.front());
    else
        m_shapes->setText(request.inputs.join(QLatin1Char(' ')));
    m_output->setText(request.outputDir);
    const int device = m_device->findText(request.device);
    m_device->setCurrentIndex(device >= 0 ? device : 0);
    m_samples->setValue(request.samplesPerCard);
    revalidate();
}

QString OpenModelDialog::validationError() const
{
    const CaptureRequest r = request();
    if (r.modelPath.isEmpty())
        return tr("Choose the TorchScript model file.");
    if (!QFileInfo(r.modelPath).isFile())
        return tr("%1: no such file").arg(r.modelPath);
    if (m_fileMode->isChecked()) {
        if (r.inputs.front().isEmpty())
            return tr("Choose the torch.save file with the inputs.");
        if (!QFileInfo(r.inputs.front()).isFile())
            return tr("%1: no such file").arg(r.inputs.front());
    } else {
        if (r.inputs.isEmpty())
            return tr("Enter one shape spec per model input, e.g. 2x3x224x224.");
        for (const QString& spec : r.inputs) {
            auto parsed = core::parseShapeSpec(spec.toStdString());
            if (!parsed)
                return QString::fromStdString(parsed.error().toString());
        }
    }
    if (r.outputDir.isEmpty())
        return tr("Choose the project folder to create.");
    const QFileInfo output(r.outputDir);
    if (output.exists() && (!output.isDir() || !QDir(r.outputDir).isEmpty()))
        return tr("%1: the project folder must be new or empty").arg(r.outputDir);
    return {};
}

void OpenModelDialog::browseModel()
{
    const QString path = QFileDialog::getOpenFileName(this, tr("TorchScript Model"), m_model->text(),
                                                      tr("TorchScript (*.pt *.pth *.ts *.zip);;All files (*)"));
    if (path.isEmpty())
        return;
    m_model->setText(path);
    suggestOutputDir();
}

void OpenModelDialog::browseInputsFile()
{
    const QString path = QFileDialog::getOpenFileName(this, tr("Inputs (torch.save)"), m_inputsFile->text(),
                                                      tr("torch.save files (*.pt *.pth);;All files (*)"));
    if (!path.isEmpty())
        m_inputsFile->setText(path);
}

void OpenModelDialog::browseOutput()
{
    const QString path = QFileDialog::getExistingDirectory(this, tr("Project Folder (new or empty)"), m_output->text());
    if (!path.isEmpty())
        m_output->setText(path);
}

void OpenModelDialog::suggestOutputDir()
{
    if (!m_output->text().trimmed().isEmpty())
        return;
    const QFileInfo model(m_model->text().trimmed());
    if (model.isFile())
        m_output->setText(model.absoluteDir().filePath(model.completeBaseName() + QStringLiteral(".kforge")));
}

void OpenModelDialog::revalidate()
{
    const QString error = validationError();
    m_error->setText(error);
    m_error->setVisible(!error.isEmpty());
    m_buttons->button(QDialogButtonBox::Ok)->setEnabled(error.isEmpty());
}

QStringList OpenModelDialog::shapeSpecs() const
{
    return m_shapes->text().split(QRegularExpression(QStringLiteral("\\s+")), Qt::SkipEmptyParts);
}

} // namespace kforge::views
