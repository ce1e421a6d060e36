#pragma once
// The PTX and the SASS of one node's kernel side by side, read-only, under one line saying what is
// shown or why not (compiling, the source does not compile, no nvdisasm). The kernel editor's
// "PTX / SASS" tab; it shows what it is given and computes nothing.
//
// Thread: GUI thread only.

#include <QWidget>

class QLabel;
class QPlainTextEdit;

namespace kforge::views {

class AssemblyView : public QWidget {
    Q_OBJECT
public:
    explicit AssemblyView(QWidget* parent = nullptr);

    /// Empty listings under `message` ("Compiling node n3...", "No node selected").
    void clear(const QString& message);
    /// The listings, and `message` above them (what they are, or why one is empty).
    void setListing(const QString& ptx, const QString& sass, const QString& message);

    QString ptx() const;
    QString sass() const;
    QString message() const;
    QPlainTextEdit* ptxView() const { return m_ptx; }
    QPlainTextEdit* sassView() const { return m_sass; }

private:
    QLabel* m_message;
    QPlainTextEdit* m_ptx;
    QPlainTextEdit* m_sass;
};

} // namespace kforge::views
