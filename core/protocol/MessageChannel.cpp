#include "protocol/MessageChannel.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <poll.h>
#include <pthread.h>
#include <sys/uio.h>
#include <unistd.h>

namespace kforge::core {
namespace {

constexpr size_t kScratchBytes = 1u << 20; // pipes deliver at most their capacity per read()

// Blocks SIGPIPE in this thread while alive; on destruction discards a SIGPIPE that a write in
// its scope raised (EPIPE), then restores the previous mask. A SIGPIPE that was already pending
// before (someone else's) is left alone. This keeps the process's dispositions untouched.
class SigpipeBlock {
public:
    SigpipeBlock()
    {
        sigemptyset(&m_set);
        sigaddset(&m_set, SIGPIPE);
        pthread_sigmask(SIG_BLOCK, &m_set, &m_old);
        sigset_t pending;
        sigemptyset(&pending);
        m_wasPending = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1;
    }
    ~SigpipeBlock()
    {
        const int savedErrno = errno;
        if (m_sawEpipe && !m_wasPending) {
            const timespec zero{};
            while (sigtimedwait(&m_set, nullptr, &zero) < 0 && errno == EINTR) {}
        }
        pthread_sigmask(SIG_SETMASK, &m_old, nullptr);
        errno = savedErrno;
    }
    SigpipeBlock(const SigpipeBlock&) = delete;
    SigpipeBlock& operator=(const SigpipeBlock&) = delete;

    void sawEpipe() { m_sawEpipe = true; }

private:
    sigset_t m_set;
    sigset_t m_old;
    bool m_wasPending = false;
    bool m_sawEpipe = false;
};

std::uint32_t decodeLength(const char* p)
{
    const auto* u = reinterpret_cast<const unsigned char*>(p);
    return std::uint32_t(u[0]) | (std::uint32_t(u[1]) << 8) | (std::uint32_t(u[2]) << 16) | (std::uint32_t(u[3]) << 24);
}

std::string errnoText(const char* what)
{
    return std::string(what) + ": " + std::strerror(errno);
}

} // namespace

MessageChannel::MessageChannel(int inFd, int outFd, std::uint32_t maxMessageBytes)
    : m_inFd(inFd), m_outFd(outFd), m_maxBytes(maxMessageBytes)
{
}

MessageChannel::~MessageChannel() = default;

int MessageChannel::pollTimeoutMs(Deadline deadline)
{
    if (!deadline)
        return -1;
    const auto left = *deadline - Clock::now();
    if (left <= Clock::duration::zero())
        return 0;
    const auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
    return ms > 1'000'000'000 ? 1'000'000'000 : static_cast<int>(ms);
}

MessageChannel::ReadResult MessageChannel::failRead(ReadStatus status, std::string error, bool breakStream)
{
    if (breakStream) {
        m_readBroken = true;
        m_brokenReason = error;
    }
    return ReadResult{status, {}, std::move(error)};
}

MessageChannel::ReadResult MessageChannel::read(Deadline deadline)
{
    if (m_readBroken)
        return ReadResult{ReadStatus::ProtocolError, {}, m_brokenReason};
    if (m_inFd < 0)
        return ReadResult{ReadStatus::IoError, {}, "channel has no input"};
    for (;;) {
        size_t needed = 4;
        if (m_buffer.size() >= 4) {
            const std::uint32_t length = decodeLength(m_buffer.data());
            if (length > m_maxBytes)
                return failRead(ReadStatus::ProtocolError,
                                "message length " + std::to_string(length) + " exceeds the limit of " +
                                    std::to_string(m_maxBytes) + " bytes",
                                true);
            const size_t frame = 4 + size_t(length);
            if (m_buffer.size() >= frame) {
                nlohmann::json message =
                    nlohmann::json::parse(m_buffer.data() + 4, m_buffer.data() + frame, nullptr, false);
                m_buffer.erase(0, frame);
                if (m_buffer.capacity() > kScratchBytes && m_buffer.size() < kScratchBytes)
                    m_buffer.shrink_to_fit(); // do not hold on to the memory of one large message
                if (message.is_discarded())
                    return failRead(ReadStatus::ProtocolError,
                                    "message of " + std::to_string(length) + " bytes is not valid UTF-8 JSON", false);
                return ReadResult{ReadStatus::Message, std::move(message), {}};
            }
            if (m_buffer.capacity() < frame)
                m_buffer.reserve(frame);
            needed = frame - m_buffer.size();
        } else {
            needed = 4 - m_buffer.size();
        }

        pollfd pfd{m_inFd, POLLIN, 0};
        const int ready = ::poll(&pfd, 1, pollTimeoutMs(deadline));
        if (ready < 0) {
            if (errno == EINTR)
                continue;
            return failRead(ReadStatus::IoError, errnoText("poll failed"), false);
        }
        if (ready == 0)
            return ReadResult{ReadStatus::Timeout, {}, "no message before the deadline"};
        if (pfd.revents & POLLNVAL)
            return failRead(ReadStatus::IoError, "input descriptor is not open", false);

        if (!m_scratch)
            m_scratch = std::make_unique<char[]>(kScratchBytes);
        const size_t chunk = needed < 65536 ? 65536 : (needed < kScratchBytes ? needed : kScratchBytes);
        const ssize_t n = ::read(m_inFd, m_scratch.get(), chunk);
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
                continue;
            return failRead(ReadStatus::IoError, errnoText("read failed"), false);
        }
        if (n == 0) {
            if (m_buffer.empty())
                return ReadResult{ReadStatus::EndOfStream, {}, "peer closed the stream"};
            const std::string got = std::to_string(m_buffer.size());
            return failRead(ReadStatus::ProtocolError,
                            m_buffer.size() < 4 ? "stream ended inside a message header (" + got + " of 4 bytes)"
                                                : "stream ended inside a message (" + got + " of " +
                                    std::to_string(4 + size_t(decodeLength(m_buffer.data()))) + " bytes)",
                            true);
        }
        m_buffer.append(m_scratch.get(), size_t(n));
    }
}

MessageChannel::WriteResult MessageChannel::write(const nlohmann::json& message, Deadline deadline)
{
    if (m_writeBroken)
        return WriteResult{WriteStatus::IoError, "channel output is broken by an earlier incomplete write"};
    if (m_outFd < 0)
        return WriteResult{WriteStatus::IoError, "channel has no output"};

    std::string body;
    try {
        body = message.dump();
    } catch (const nlohmann::json::exception& e) {
        return WriteResult{WriteStatus::Refused, std::string("message cannot be serialized: ") + e.what()};
    }
    if (body.size() > m_maxBytes)
        return WriteResult{WriteStatus::Refused,
                           "message of " + std::to_string(body.size()) + " bytes exceeds the limit of " +
                               std::to_string(m_maxBytes) + " bytes"};

    const auto length = static_cast<std::uint32_t>(body.size());
    unsigned char header[4] = {
        static_cast<unsigned char>(length & 0xff), static_cast<unsigned char>((length >> 8) & 0xff),
        static_cast<unsigned char>((length >> 16) & 0xff), static_cast<unsigned char>((length >> 24) & 0xff)};
    const size_t total = 4 + body.size();
    size_t written = 0;

    SigpipeBlock sigpipe;
    auto fail = [&](WriteStatus status, std::string error) {
        if (written > 0)
            m_writeBroken = true;
        return WriteResult{status, std::move(error)};
    };
    while (written < total) {
        if (deadline) {
            pollfd pfd{m_outFd, POLLOUT, 0};
            const int ready = ::poll(&pfd, 1, pollTimeoutMs(deadline));
            if (ready < 0) {
                if (errno == EINTR)
                    continue;
                return fail(WriteStatus::IoError, errnoText("poll failed"));
            }
            if (ready == 0)
                return fail(WriteStatus::Timeout,
                            "message not written before the deadline (" + std::to_string(written) + " of " +
                                std::to_string(total) + " bytes)");
            if (pfd.revents & POLLNVAL)
                return fail(WriteStatus::IoError, "output descriptor is not open");
            // POLLERR/POLLHUP: the write below reports EPIPE.
        }
        iovec iov[2];
        int count = 0;
        if (written < 4) {
            iov[count++] = {header + written, 4 - written};
            iov[count++] = {body.data(), body.size()};
        } else {
            iov[count++] = {body.data() + (written - 4), total - written};
        }
        const ssize_t n = ::writev(m_outFd, iov, count);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                if (!deadline) {
                    // Non-blocking descriptor without a deadline: wait until writable.
                    pollfd pfd{m_outFd, POLLOUT, 0};
                    if (::poll(&pfd, 1, -1) < 0 && errno != EINTR)
                        return fail(WriteStatus::IoError, errnoText("poll failed"));
                }
                continue;
            }
            if (errno == EPIPE) {
                sigpipe.sawEpipe();
                return fail(WriteStatus::PeerClosed, "peer closed the stream (broken pipe)");
            }
            return fail(WriteStatus::IoError, errnoText("write failed"));
        }
        written += size_t(n);
    }
    return WriteResult{WriteStatus::Written, {}};
}

} // namespace kforge::core
