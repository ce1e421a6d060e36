#pragma once
// What the user asked to capture, as entered in OpenModelDialog. The app turns it into
// core::CaptureOptions; views never start a capture themselves.

#include <QString>
#include <QStringList>

namespace kforge::views {

struct CaptureRequest {
    QString modelPath;                       // the TorchScript file
    QStringList inputs;                      // one shape spec per model input, or a single torch.save file path
    QString outputDir;                       // the project folder to create (absent or empty)
    QString device = QStringLiteral("auto"); // auto | cpu | cuda
    int samplesPerCard = 2;
};

} // namespace kforge::views
