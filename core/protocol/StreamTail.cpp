#include "protocol/StreamTail.h"

#include <cerrno>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

namespace kforge::core {

StreamTail::StreamTail(std::size_t capacityBytes) : m_capacity(capacityBytes == 0 ? 1 : capacityBytes)
{
}

StreamTail::~StreamTail()
{
    stop(std::chrono::milliseconds(0));
}

void StreamTail::start(int fd)
{
    stop(std::chrono::milliseconds(0));
    {
        std::lock_guard lock(m_mutex);
        m_data.clear();
        m_eof = false;
    }
    m_stopping = false;
    int wake[2] = {-1, -1};
    if (::pipe2(wake, O_CLOEXEC) != 0)
        wake[0] = wake[1] = -1; // the reader then polls m_stopping every 50 ms instead
    m_fd = fd;
    m_wakeRead = wake[0];
    m_wakeWrite = wake[1];
    m_thread = std::thread([this, fd, wakeFd = wake[0]] { readLoop(fd, wakeFd); });
}

void StreamTail::readLoop(int fd, int wakeFd)
{
    char buffer[16384];
    for (;;) {
        pollfd pfds[2] = {{fd, POLLIN, 0}, {wakeFd, POLLIN, 0}}; // poll() skips a negative wakeFd
        const int ready = ::poll(pfds, 2, wakeFd >= 0 ? -1 : 50);
        if (m_stopping.load())
            return; // stop() does not wait for end-of-stream any longer
        if (ready < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (pfds[0].revents == 0)
            continue;
        const ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n <= 0)
            break;
        std::lock_guard lock(m_mutex);
        m_data.append(buffer, size_t(n));
        if (m_data.size() > 2 * m_capacity)
            m_data.erase(0, m_data.size() - m_capacity);
    }
    std::lock_guard lock(m_mutex);
    m_eof = true;
    m_eofChanged.notify_all();
}

void StreamTail::stop(std::chrono::milliseconds grace)
{
    if (!m_thread.joinable())
        return;
    {
        std::unique_lock lock(m_mutex);
        m_eofChanged.wait_for(lock, grace, [this] { return m_eof; });
    }
    m_stopping = true;
    if (m_wakeWrite >= 0) {
        const char byte = 1;
        while (::write(m_wakeWrite, &byte, 1) < 0 && errno == EINTR) {}
    }
    m_thread.join();
    ::close(m_fd);
    if (m_wakeRead >= 0)
        ::close(m_wakeRead);
    if (m_wakeWrite >= 0)
        ::close(m_wakeWrite);
    m_fd = m_wakeRead = m_wakeWrite = -1;
}

std::string StreamTail::text() const
{
    std::lock_guard lock(m_mutex);
    if (m_data.size() <= m_capacity)
        return m_data;
    return m_data.substr(m_data.size() - m_capacity);
}

std::string StreamTail::lastLines(std::size_t count) const
{
    return lastLinesOf(text(), count);
}

std::string StreamTail::lastLinesOf(const std::string& text, std::size_t count)
{
    std::string out;
    std::size_t end = text.size();
    std::size_t taken = 0;
    while (taken < count && end > 0) {
        const std::size_t newline = text.rfind('\n', end - 1);
        const std::size_t begin = newline == std::string::npos ? 0 : newline + 1;
        std::string line = text.substr(begin, end - begin);
        if (!line.empty() && line.back() == '\r')
            line.pop_back();
        if (!line.empty()) {
            out = out.empty() ? line : line + "\n" + out;
            ++taken;
        }
        if (newline == std::string::npos)
            break;
        end = newline;
    }
    return out;
}

} // namespace kforge::core
