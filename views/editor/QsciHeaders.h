#pragma once
// The one place that includes QScintilla. Its headers declare `signals:` and `public slots:`, which
// QT_NO_KEYWORDS leaves undefined; they are mapped to Q_SIGNALS/Q_SLOTS for these headers only.

#include <QObject>

#if defined(signals) || defined(slots)
#error "QsciHeaders.h expects QT_NO_KEYWORDS"
#endif
#define signals Q_SIGNALS
#define slots Q_SLOTS
#include <Qsci/qscilexercpp.h>
#include <Qsci/qscilexerjson.h>
#include <Qsci/qsciscintilla.h>
#include <Qsci/qscistyle.h>
#undef signals
#undef slots
