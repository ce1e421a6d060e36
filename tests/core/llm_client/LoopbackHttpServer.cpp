#include "LoopbackHttpServer.h"

#include <algorithm>
#include <arpa/inet.h>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace kforge::core::test {

namespace {

constexpr int kPollMs = 20;
constexpr std::size_t kMaxRequestBytes = 16u << 20;

[[noreturn]] void die(const char* what)
{
    std::perror(what);
    std::abort();
}

std::string lower(std::string s)
{
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

std::string trim(const std::string& s)
{
    const auto b = s.find_first_not_of(" \t");
    const auto e = s.find_last_not_of(" \t\r");
    return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

const char* reasonPhrase(int status)
{
    switch (status) {
    case 200:
        return "OK";
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 429:
        return "Too Many Requests";
    case 500:
        return "Internal Server Error";
    case 503:
        return "Service Unavailable";
    default:
        return "Status";
    }
}

void sendAll(int fd, const std::string& data)
{
    std::size_t sent = 0;
    while (sent < data.size()) {
        const ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
        if (n <= 0)
            return; // the client went away (cancelled or timed out): nothing to do
        sent += static_cast<std::size_t>(n);
    }
}

} // namespace

std::string RecordedRequest::header(const std::string& lowerName) const
{
    for (const auto& [name, value] : headers) {
        if (name == lowerName)
            return value;
    }
    return {};
}

LoopbackHttpServer::LoopbackHttpServer()
{
    m_listenFd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (m_listenFd < 0)
        die("socket");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    if (::bind(m_listenFd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
        die("bind");
    if (::listen(m_listenFd, 16) != 0)
        die("listen");
    socklen_t len = sizeof addr;
    if (::getsockname(m_listenFd, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
        die("getsockname");
    m_port = ntohs(addr.sin_port);
    m_thread = std::thread([this] { serve(); });
}

LoopbackHttpServer::~LoopbackHttpServer()
{
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
    }
    m_stopCv.notify_all();
    m_thread.join();
    ::close(m_listenFd);
}

std::string LoopbackHttpServer::baseUrl() const
{
    return "http://127.0.0.1:" + std::to_string(m_port);
}

void LoopbackHttpServer::enqueue(ScriptedResponse response)
{
    std::lock_guard lock(m_mutex);
    m_script.push_back(std::move(response));
}

std::vector<RecordedRequest> LoopbackHttpServer::requests() const
{
    std::lock_guard lock(m_mutex);
    return m_requests;
}

void LoopbackHttpServer::serve()
{
    while (!m_stop) {
        pollfd p{m_listenFd, POLLIN, 0};
        if (::poll(&p, 1, kPollMs) <= 0)
            continue;
        const int fd = ::accept4(m_listenFd, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0)
            continue;
        handle(fd);
        ::close(fd);
    }
}

void LoopbackHttpServer::waitFor(std::chrono::milliseconds delay)
{
    std::unique_lock lock(m_mutex);
    m_stopCv.wait_for(lock, delay, [this] { return m_stop.load(); });
}

bool LoopbackHttpServer::readRequest(int fd, RecordedRequest& out)
{
    std::string data;
    std::size_t headerEnd = std::string::npos;
    std::size_t contentLength = 0;
    char buffer[16384];
    while (!m_stop) {
        if (headerEnd != std::string::npos && data.size() >= headerEnd + 4 + contentLength)
            break;
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, kPollMs) <= 0)
            continue;
        const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
        if (n <= 0 || data.size() + static_cast<std::size_t>(n) > kMaxRequestBytes)
            return false;
        data.append(buffer, static_cast<std::size_t>(n));
        if (headerEnd == std::string::npos && (headerEnd = data.find("\r\n\r\n")) != std::string::npos) {
            // Request line, then "Name: value" lines.
            std::size_t pos = data.find("\r\n");
            const std::string requestLine = data.substr(0, pos);
            const auto sp1 = requestLine.find(' ');
            const auto sp2 = requestLine.find(' ', sp1 + 1);
            if (sp1 == std::string::npos || sp2 == std::string::npos)
                return false;
            out.method = requestLine.substr(0, sp1);
            out.path = requestLine.substr(sp1 + 1, sp2 - sp1 - 1);
            while (pos < headerEnd) {
                const std::size_t next = data.find("\r\n", pos + 2);
                const std::string line = data.substr(pos + 2, next - pos - 2);
                pos = next;
                const auto colon = line.find(':');
                if (colon == std::string::npos)
                    continue;
                out.headers.emplace_back(lower(line.substr(0, colon)), trim(line.substr(colon + 1)));
            }
            const std::string length = out.header("content-length");
            contentLength = length.empty() ? 0 : std::stoul(length);
        }
    }
    if (m_stop)
        return false;
    out.body = data.substr(headerEnd + 4, contentLength);
    return true;
}

void LoopbackHttpServer::handle(int fd)
{
    RecordedRequest request;
    if (!readRequest(fd, request))
        return;
    ScriptedResponse response;
    {
        std::lock_guard lock(m_mutex);
        m_requests.push_back(request);
        if (m_script.empty()) {
            response.status = 500;
            response.body = R"({"error":{"message":"no scripted response"}})";
        } else {
            response = std::move(m_script.front());
            m_script.pop_front();
        }
    }
    if (response.delay.count() > 0) {
        waitFor(response.delay);
        if (m_stop)
            return;
    }
    std::string head = "HTTP/1.1 " + std::to_string(response.status) + " " + reasonPhrase(response.status) + "\r\n";
    head += "Content-Type: " + response.contentType + "\r\n";
    head += "Content-Length: " + std::to_string(response.body.size()) + "\r\n";
    head += "Connection: close\r\n";
    for (const auto& [name, value] : response.headers)
        head += name + ": " + value + "\r\n";
    head += "\r\n";
    sendAll(fd, head + response.body);
    ::shutdown(fd, SHUT_WR);
}

} // namespace kforge::core::test
