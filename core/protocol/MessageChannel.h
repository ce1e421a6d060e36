#pragma once
// Framing of the worker protocol (docs/worker-protocol.md): JSON messages over a pair of file
// descriptors, usually the two pipes between the engine and kforge-worker. Each message is a
// 4-byte little-endian length N followed by N bytes of UTF-8 JSON; N above the channel's limit is
// a protocol error (the stream cannot be resynchronized after it).
//
// Ownership: the channel never closes its descriptors; the caller owns them and must keep them
// open for the channel's lifetime. Either may be -1 for a one-way channel.
// Deadlines: read() honours its deadline on any descriptor (poll before every read). write()
// honours its deadline only when the output descriptor is O_NONBLOCK (a blocking pipe write of
// more than PIPE_BUF bytes cannot be interrupted); WorkerClient makes its end non-blocking.
// SIGPIPE: write() blocks SIGPIPE in the calling thread for the duration of the call and discards
// a SIGPIPE that its own write raised, so writing to a pipe whose reader is gone returns
// PeerClosed instead of killing the process; process-wide signal dispositions are not touched
// (the pipe equivalent of MSG_NOSIGNAL).
// Thread: one reader thread and one writer thread at a time (read and write state are separate).

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace kforge::core {

class MessageChannel {
public:
    using Clock = std::chrono::steady_clock;
    /// No value: wait as long as it takes.
    using Deadline = std::optional<Clock::time_point>;

    static constexpr std::uint32_t kDefaultMaxMessageBytes = 64u << 20; // 64 MiB of JSON

    enum class ReadStatus {
        Message,       // `message` holds the next message
        EndOfStream,   // the peer closed its end cleanly between messages
        Timeout,       // the deadline passed; a partly received message is kept for the next read
        ProtocolError, // bad length, stream ended inside a message, or the body is not JSON
        IoError,       // read()/poll() failed
    };
    struct ReadResult {
        ReadStatus status = ReadStatus::IoError;
        nlohmann::json message; // Message only
        std::string error;      // one line for ProtocolError/IoError
    };

    enum class WriteStatus {
        Written,    // the whole frame was written
        PeerClosed, // EPIPE: nobody reads the other end any more
        Timeout,    // the deadline passed (non-blocking descriptors only)
        Refused,    // nothing was written: the message is over the limit or not serializable
        IoError,    // write()/poll() failed
    };
    struct WriteResult {
        WriteStatus status = WriteStatus::IoError;
        std::string error; // one line unless Written
        bool ok() const { return status == WriteStatus::Written; }
    };

    MessageChannel(int inFd, int outFd, std::uint32_t maxMessageBytes = kDefaultMaxMessageBytes);
    ~MessageChannel();
    MessageChannel(const MessageChannel&) = delete;
    MessageChannel& operator=(const MessageChannel&) = delete;

    /// Reads the next message. Bytes beyond it stay buffered for the next call. After a framing
    /// error (bad length, truncated message) every later read returns ProtocolError again; a
    /// well-framed body that is not JSON is consumed and the stream stays usable (see broken()).
    ReadResult read(Deadline deadline = std::nullopt);

    /// Serializes and writes one message (EINTR, partial writes and EAGAIN handled). After a write
    /// that stopped inside a frame (Timeout, PeerClosed, IoError) the output is unusable and every
    /// later write returns IoError.
    WriteResult write(const nlohmann::json& message, Deadline deadline = std::nullopt);

    /// True once the input stream lost its framing; no further message can be read from it.
    bool broken() const { return m_readBroken; }

    std::uint32_t maxMessageBytes() const { return m_maxBytes; }
    int inFd() const { return m_inFd; }
    int outFd() const { return m_outFd; }

    /// Milliseconds to pass to poll() for `deadline`: -1 for none, 0 once passed, else rounded up.
    static int pollTimeoutMs(Deadline deadline);

private:
    ReadResult failRead(ReadStatus status, std::string error, bool breakStream);

    int m_inFd;
    int m_outFd;
    std::uint32_t m_maxBytes;
    std::string m_buffer;              // received bytes, starting at a frame boundary
    std::unique_ptr<char[]> m_scratch; // read() target, allocated on first use
    bool m_readBroken = false;
    std::string m_brokenReason;
    bool m_writeBroken = false;
};

} // namespace kforge::core
