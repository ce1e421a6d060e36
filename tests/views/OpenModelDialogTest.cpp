// OpenModelDialog: validation gates the Capture button with one clear line; request() returns
// exactly what was entered.

#include "views/capture/OpenModelDialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRadioButton>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

using kforge::views::CaptureRequest;
using kforge::views::OpenModelDialog;

namespace {

template <class W>
W* child(QWidget& parent, const char* name)
{
    W* widget = parent.findChild<W*>(QString::fromLatin1(name));
    if (!widget)
        qFatal("no child widget named %s", name);
    return widget;
}

bool touch(const QString& path)
{
    QFile file(path);
    return file.open(QIODevice::WriteOnly) && file.write("x") == 1;
}

} // namespace

class OpenModelDialogTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void init()
    {
        m_dir = std::make_unique<QTemporaryDir>();
        QVERIFY(m_dir->isValid());
        m_model = m_dir->filePath(QStringLiteral("net.pt"));
        QVERIFY(touch(m_model));
    }

    void captureNeedsAModelInputsAndANewFolder()
    {
        OpenModelDialog dialog;
        QPushButton* ok = dialog.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok);
        QLabel* error = child<QLabel>(dialog, "validationError");
        QVERIFY(!ok->isEnabled());
        QCOMPARE(error->text(), QStringLiteral("Choose the TorchScript model file."));

        child<QLineEdit>(dialog, "modelPath")->setText(m_dir->filePath(QStringLiteral("missing.pt")));
        QVERIFY(dialog.validationError().endsWith(QStringLiteral("missing.pt: no such file")));

        QLineEdit* model = child<QLineEdit>(dialog, "modelPath");
        model->setText(m_model);
        QMetaObject::invokeMethod(model, "editingFinished");
        // The project folder is suggested beside the model.
        QCOMPARE(child<QLineEdit>(dialog, "outputDir")->text(), m_dir->filePath(QStringLiteral("net.kforge")));
        QVERIFY(dialog.validationError().startsWith(QStringLiteral("Enter one shape spec")));

        child<QLineEdit>(dialog, "inputsShapes")->setText(QStringLiteral("2x3x16x16 4xbanana"));
        QVERIFY2(dialog.validationError().contains(QStringLiteral("4xbanana")), qPrintable(dialog.validationError()));
        QVERIFY(!ok->isEnabled());
        QVERIFY(error->text().contains(QStringLiteral("4xbanana")));

        child<QLineEdit>(dialog, "inputsShapes")->setText(QStringLiteral("  2x3x16x16   4x512:int64[0,32000) "));
        QCOMPARE(dialog.validationError(), QString());
        QVERIFY(ok->isEnabled());
        QVERIFY(error->isHidden());

        QVERIFY(touch(m_dir->filePath(QStringLiteral("occupied"))));
        child<QLineEdit>(dialog, "outputDir")->setText(m_dir->path());
        QVERIFY(dialog.validationError().contains(QStringLiteral("must be new or empty")));
        QVERIFY(!ok->isEnabled());
        child<QLineEdit>(dialog, "outputDir")->setText(m_dir->filePath(QStringLiteral("proj")));
        QVERIFY(ok->isEnabled());

        child<QComboBox>(dialog, "device")->setCurrentText(QStringLiteral("cpu"));
        child<QSpinBox>(dialog, "samplesPerCard")->setValue(5);
        const CaptureRequest r = dialog.request();
        QCOMPARE(r.modelPath, m_model);
        QCOMPARE(r.inputs, QStringList({QStringLiteral("2x3x16x16"), QStringLiteral("4x512:int64[0,32000)")}));
        QCOMPARE(r.outputDir, m_dir->filePath(QStringLiteral("proj")));
        QCOMPARE(r.device, QStringLiteral("cpu"));
        QCOMPARE(r.samplesPerCard, 5);
    }

    void inputsFromATorchSaveFile()
    {
        const QString inputs = m_dir->filePath(QStringLiteral("inputs.pt"));
        QVERIFY(touch(inputs));
        CaptureRequest prefill;
        prefill.modelPath = m_model;
        prefill.inputs = {inputs};
        prefill.outputDir = m_dir->filePath(QStringLiteral("out"));
        prefill.device = QStringLiteral("cuda");
        prefill.samplesPerCard = 0;

        OpenModelDialog dialog;
        dialog.setRequest(prefill);
        QVERIFY(child<QRadioButton>(dialog, "inputsFileMode")->isChecked());
        QVERIFY(!child<QLineEdit>(dialog, "inputsShapes")->isEnabled());
        QCOMPARE(dialog.validationError(), QString());
        const CaptureRequest r = dialog.request();
        QCOMPARE(r.inputs, QStringList{inputs});
        QCOMPARE(r.device, QStringLiteral("cuda"));
        QCOMPARE(r.samplesPerCard, 0);

        child<QLineEdit>(dialog, "inputsFile")->setText(m_dir->filePath(QStringLiteral("nope.pt")));
        QVERIFY(dialog.validationError().endsWith(QStringLiteral("nope.pt: no such file")));
        child<QRadioButton>(dialog, "inputsShapesMode")->setChecked(true);
        QVERIFY(dialog.validationError().startsWith(QStringLiteral("Enter one shape spec")));
    }

private:
    std::unique_ptr<QTemporaryDir> m_dir;
    QString m_model;
};

QTEST_MAIN(OpenModelDialogTest)
#include "OpenModelDialogTest.moc"
