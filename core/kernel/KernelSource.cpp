#include "kernel/KernelSource.h"

namespace kforge::core {

const char* diagnosticSeverityName(DiagnosticSeverity severity)
{
    switch (severity) {
    case DiagnosticSeverity::Error:
        return "error";
    case DiagnosticSeverity::Warning:
        return "warning";
    case DiagnosticSeverity::Remark:
        return "remark";
    }
    return "error";
}

} // namespace kforge::core
