#pragma once
// The background thread of a GUI-owned job (capture, optimize, benchmark an edit, export): start()
// runs `work` on a std::thread unless a run is still going, and hands its result to `deliver` on
// the thread of `context` (the owning QObject) through a queued call, once. The destructor joins.
//
// Thread: start(), isRunning() and destruction on the context's thread. Declare the JobThread as a
// member of the context object: when the owner is destroyed the thread is joined, and a delivery
// still queued is dropped with the owner.

#include <QMetaObject>
#include <QObject>

#include <memory>
#include <thread>
#include <utility>

namespace kforge::app {

class JobThread {
public:
    explicit JobThread(QObject* context) : m_context(context) {}
    ~JobThread() { join(); }
    JobThread(const JobThread&) = delete;
    JobThread& operator=(const JobThread&) = delete;

    /// False (nothing started) while a previous run has not been delivered yet.
    template <class Work, class Deliver>
    bool start(Work work, Deliver deliver)
    {
        if (m_running)
            return false;
        join();
        m_running = true;
        m_thread = std::thread([this, work = std::move(work), deliver = std::move(deliver)]() mutable {
            auto result = std::make_shared<decltype(work())>(work());
            QMetaObject::invokeMethod(
                m_context,
                [this, result, deliver = std::move(deliver)]() mutable {
                    m_running = false;
                    deliver(*result);
                },
                Qt::QueuedConnection);
        });
        return true;
    }

    bool isRunning() const { return m_running; }

private:
    void join()
    {
        if (m_thread.joinable())
            m_thread.join();
    }

    QObject* m_context;
    std::thread m_thread;
    bool m_running = false;
};

} // namespace kforge::app
