#pragma once
// Benchmarks an edit made in the kernel editor on a job thread: core::benchEditIntoTree
// (engine/EditBench.h) compiles, validates and times the edited source and plan against the card,
// records it in the card's tree as a child of the node it was edited from, with provenance
// "manual-edit", and saves the tree.
//
// Contracts:
// - Thread: create, call and destroy on the GUI thread (asserted). The work runs on a std::thread;
//   its outcome comes back once, as an immutable value, through a queued call.
// - One job at a time: start() refuses while one runs.
// - The tree file is read, extended and saved on the job thread (docs/search.md: atomic save) under
//   the project's writer lock (project/ProjectLock.h): while an optimize run (this app's or a
//   kforge's) holds it, the job fails with one line naming the holder, and vice versa.
// - Destruction while a job runs joins the thread (a bench ends at the worker's watchdog at worst);
//   no signal is emitted after destruction.

#include "model/OperatorCard.h"
#include "model/SearchTree.h"

#include <QObject>
#include <QString>

#include <nlohmann/json.hpp>

#include "app/JobThread.h"

#include <memory>

namespace kforge::app {

struct ManualEditRequest {
    QString projectDir;
    core::OperatorCard card;
    QString parentNodeId;
    QString source;
    QString planJson;   // empty: the plan embedded in the source (/*kforge-plan ... */)
    QString workerPath; // empty: core::workerPath's default
    /// Provenance transformation of the new node: "manual edit", or "re-benchmark" for Run >
    /// Re-benchmark Node (the node's own source measured again, as a child of it).
    QString transformation = QStringLiteral("manual edit");
};

class ManualEditJob : public QObject {
    Q_OBJECT
public:
    explicit ManualEditJob(QObject* parent = nullptr);
    ~ManualEditJob() override;

    /// False (nothing started) while a job runs.
    bool start(ManualEditRequest request);
    bool isRunning() const { return m_job.isRunning(); }

Q_SIGNALS:
    /// The edit is node `nodeId` of `tree` (saved); `report` is its evaluation report (status,
    /// compile diagnostics, checks, timing), as the node keeps it.
    void finished(std::shared_ptr<const core::SearchTree> tree, const QString& nodeId,
                  const core::EvaluationReport& report);
    /// One line: the plan is not JSON, the tree cannot be read or saved, the worker cannot start.
    void failed(const QString& error);

private:
    JobThread m_job{this};
};

} // namespace kforge::app
