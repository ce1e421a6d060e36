#pragma once
// Syntax highlighting for CUDA C++: QScintilla's C++ lexer plus the CUDA keywords, qualifiers,
// built-in variables, intrinsics and vector/half types as keyword set 2 (style KeywordSet2), and
// a monospace font for every style.
//
// Thread: GUI thread only (a QObject owned by the editor it is set on, or by `parent`).

#include "views/editor/QsciHeaders.h"

namespace kforge::views {

class CudaLexer : public QsciLexerCPP {
    Q_OBJECT
public:
    explicit CudaLexer(QObject* parent = nullptr);

    const char* language() const override;
    /// Set 1: the C++ keywords of QsciLexerCPP; set 2: cudaKeywords(); others as QsciLexerCPP.
    const char* keywords(int set) const override;
    QColor defaultColor(int style) const override;
    QFont defaultFont(int style) const override;
    QString description(int style) const override;

    /// The CUDA words of keyword set 2, separated by single spaces.
    static const char* cudaKeywords();
};

} // namespace kforge::views
