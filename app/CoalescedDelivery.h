#pragma once
// Hands what a job's thread produces (tree snapshots, progress) to the GUI thread without flooding
// it: the producer merges each new value into one waiting Batch (a newer value replaces an
// undelivered older one of the same kind: the Batch's merge decides), and the waiting Batch is
// delivered through a queued call at most once per `interval` (100 ms: ten deliveries a second),
// however fast values come. A search that saves thousands of nodes therefore queues at most one
// batch at a time, never one copy per node. flush() delivers what waits at once: a job calls it
// before it reports its end, so the last value is always delivered, and delivered before the end.
//
// Thread: construct, flush(), deliveries() and destroy on the context's thread (the owning
// QObject's, the GUI thread); post() from any thread. Declare it as a member of the context object
// before the JobThread whose thread posts: the producer is then joined before this is destroyed,
// and a queued call still pending is dropped with the owner.

#include <QElapsedTimer>
#include <QMetaObject>
#include <QObject>
#include <QTimer>

#include <algorithm>
#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <utility>

namespace kforge::app {

template <class Batch>
class CoalescedDelivery {
public:
    /// `deliver` is called on the context's thread with the batch that waited (never an empty one:
    /// one post() at least went into it).
    CoalescedDelivery(QObject* context, std::function<void(Batch&)> deliver,
                      std::chrono::milliseconds interval = std::chrono::milliseconds(100))
        : m_context(context), m_deliver(std::move(deliver)), m_interval(interval)
    {
        m_timer.setSingleShot(true);
        m_timer.setTimerType(Qt::PreciseTimer); // never sooner than `interval` after the last delivery
        QObject::connect(&m_timer, &QTimer::timeout, context, [this]() { flush(); });
    }
    CoalescedDelivery(const CoalescedDelivery&) = delete;
    CoalescedDelivery& operator=(const CoalescedDelivery&) = delete;

    /// Any thread: `merge` updates the waiting batch under the lock (keep it cheap: move a value
    /// in). The first post into an empty batch schedules its delivery.
    template <class Merge>
    void post(Merge&& merge)
    {
        bool schedule = false;
        {
            std::lock_guard lock(m_mutex);
            if (!m_waiting) {
                m_waiting.emplace();
                schedule = true;
            }
            merge(*m_waiting);
        }
        if (schedule)
            QMetaObject::invokeMethod(
                m_context, [this]() { scheduleDelivery(); }, Qt::QueuedConnection);
    }

    /// Context's thread: delivers the waiting batch now, if any.
    void flush()
    {
        m_timer.stop();
        std::optional<Batch> batch;
        {
            std::lock_guard lock(m_mutex);
            batch.swap(m_waiting);
        }
        if (!batch)
            return;
        ++m_deliveries;
        m_sinceDelivery.start();
        m_deliver(*batch);
    }

    /// Batches delivered so far.
    int deliveries() const { return m_deliveries; }

private:
    // Context's thread: deliver when `interval` has passed since the last delivery.
    void scheduleDelivery()
    {
        if (m_timer.isActive())
            return;
        const qint64 intervalMs = m_interval.count();
        const qint64 waitMs = m_sinceDelivery.isValid() ? intervalMs - m_sinceDelivery.elapsed() : 0;
        m_timer.start(static_cast<int>(std::clamp<qint64>(waitMs, 0, intervalMs)));
    }

    QObject* m_context;
    std::function<void(Batch&)> m_deliver;
    std::chrono::milliseconds m_interval;
    QTimer m_timer; // the context's thread
    QElapsedTimer m_sinceDelivery;
    int m_deliveries = 0;
    std::mutex m_mutex; // guards m_waiting
    std::optional<Batch> m_waiting;
};

} // namespace kforge::app
