#pragma once
// One row per operator card of a project, in the project's order (first call first); views sort and
// filter through a QSortFilterProxyModel using SortRole.
//
// Thread: GUI thread only. The model holds the project value it was given; setProject() resets it.

#include "model/Project.h"
#include "models/CardSearchSummary.h"

#include <QAbstractTableModel>

#include <memory>
#include <optional>

namespace kforge::app {

class CardsTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        IdColumn,
        OpColumn,
        TensorsColumn,
        CallsColumn,
        EagerColumn, // the eager time the speedup is measured against (else the capture's), us
        ShareColumn,
        BestColumn,    // the search's best node (core::bestNode), us
        SpeedupColumn, // its speedup over eager (core::nodeSpeedup)
        StatusColumn,  // not started, searching, improved, no gain, validated/compiled only, skipped (vendor)
        NotesColumn,
        ColumnCount
    };
    enum Role {
        /// Numbers for the numeric columns (calls: qint64, eager us and share: double; an untimed card
        /// sorts below every timed one as -1), the display text otherwise.
        SortRole = Qt::UserRole + 1,
        /// The card's full 16-digit id (QString), in every column.
        CardIdRole,
    };

    explicit CardsTableModel(QObject* parent = nullptr);

    void setProject(std::shared_ptr<const core::Project> project);
    /// The search columns (eager, best, speedup, status); cards without an entry show "not started".
    void setSearchSummaries(QHash<QString, CardSearchSummary> summaries);
    /// Marks the card a run is on ("searching"); empty clears the mark.
    void setSearchingCard(const QString& id);
    const core::OperatorCard* cardAt(int row) const;
    /// What the card's row shows of its search: its summary (setSearchSummaries), "searching" for
    /// the card a run is on, "skipped (vendor)" for a vendor-backed card without one.
    CardSearchSummary summaryOf(const core::OperatorCard& card) const;
    /// The row of the card with this full id, or -1.
    int rowOfCard(const QString& id) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    /// The tensor column's text: the short form of every tensor argument, in schema order.
    static QString tensorSummary(const core::OperatorCard& card);
    /// The notes column's text: vendor-backed, sample count, why a card was not timed.
    static QString notesText(const core::OperatorCard& card);
    /// What a column header's tooltip says (the eager, best and speedup columns: what they measure).
    static QVariant headerToolTip(int section);

private:
    QVariant displayData(const core::OperatorCard& card, int column) const;
    QVariant sortData(const core::OperatorCard& card, int column) const;
    QVariant toolTipData(const core::OperatorCard& card, int column) const;
    /// The eager column's value: the eager median the search's speedup was measured against, or
    /// before a search measured one, the card's capture-time median.
    std::optional<double> eagerUsOf(const core::OperatorCard& card) const;

    std::shared_ptr<const core::Project> m_project;
    QHash<QString, CardSearchSummary> m_summaries;
    QString m_searchingCard;
};

} // namespace kforge::app
