#include "util/Result.h"

namespace kforge::core {

const char* errorCodeName(ErrorCode code)
{
    switch (code) {
    case ErrorCode::InvalidArgument:
        return "invalid-argument";
    case ErrorCode::NotFound:
        return "not-found";
    case ErrorCode::Io:
        return "io";
    case ErrorCode::BadModel:
        return "bad-model";
    case ErrorCode::BadInputs:
        return "bad-inputs";
    case ErrorCode::AlreadyExists:
        return "already-exists";
    case ErrorCode::Unsupported:
        return "unsupported";
    case ErrorCode::Cancelled:
        return "cancelled";
    case ErrorCode::Internal:
        return "internal";
    }
    return "unknown";
}

std::string Error::toString() const
{
    return context.empty() ? message : context + ": " + message;
}

} // namespace kforge::core
