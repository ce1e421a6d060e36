#pragma once
// Result values for the core: every fallible core call returns Result<T> instead of throwing.
// Exceptions from LibTorch/CUDA are caught at the adapter that calls them and turned into an Error.

#include <string>
#include <utility>
#include <variant>

namespace kforge::core {

enum class ErrorCode {
    InvalidArgument, // a user-supplied value is malformed
    NotFound,        // a named file or item does not exist
    Io,              // reading or writing failed
    BadModel,        // the model file is not a usable TorchScript archive
    BadInputs,       // the inputs do not fit the model
    AlreadyExists,   // refusing to overwrite something the user saved
    Unsupported,     // valid but not handled by this build or device
    Cancelled,       // a stop token was triggered
    Internal,        // a bug: an invariant did not hold
};

const char* errorCodeName(ErrorCode code);

/// One failure: `context` names the thing (a file, a card, an argument), `message` says what was wrong.
struct Error {
    ErrorCode code = ErrorCode::Internal;
    std::string message;
    std::string context;

    /// The single line shown to users: "context: message" (or just the message).
    std::string toString() const;
};

inline Error makeError(ErrorCode code, std::string message, std::string context = {})
{
    return Error{code, std::move(message), std::move(context)};
}

/// Either a value or an Error. Accessing the wrong alternative is a programming error.
template <class T>
class [[nodiscard]] Result {
public:
    Result(T value) : m_state(std::move(value)) {}
    Result(Error error) : m_state(std::move(error)) {}

    bool ok() const { return m_state.index() == 0; }
    explicit operator bool() const { return ok(); }

    T& value() & { return std::get<0>(m_state); }
    const T& value() const& { return std::get<0>(m_state); }
    T&& value() && { return std::get<0>(std::move(m_state)); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }

    const Error& error() const { return std::get<1>(m_state); }

private:
    std::variant<T, Error> m_state;
};

template <>
class [[nodiscard]] Result<void> {
public:
    Result() = default;
    Result(Error error) : m_error(std::move(error)), m_failed(true) {}

    bool ok() const { return !m_failed; }
    explicit operator bool() const { return ok(); }
    const Error& error() const { return m_error; }

private:
    Error m_error;
    bool m_failed = false;
};

} // namespace kforge::core
