#pragma once
// What Run > Optimize uses, as set in the Settings dialog and kept in QSettings: the proposer
// (built-in, OpenAI-compatible or Anthropic), its endpoint, model and the NAME of the environment
// variable holding the API key (never the key: it is read from the environment when a run starts
// and is written nowhere), and the budget per card.
//
// Thread: plain value type; load/save on the GUI thread.

#include <QSettings>
#include <QString>

namespace kforge::app {

struct SearchSettings {
    QString proposer = QStringLiteral("builtin"); // "builtin", "openai", "anthropic"
    QString baseUrl;                              // empty: the provider's public endpoint
    QString model;
    QString apiKeyEnv;            // empty: the provider's usual variable
    int iterations = 50;          // nodes per card, root included
    double timeLimitS = 0;        // per card; 0: none
    double evaluateTimeoutS = 60; // worker watchdog per candidate
    QString gpus;                 // "0,2" as kforge optimize --gpus; empty: every visible GPU

    bool usesLlm() const { return proposer != QStringLiteral("builtin"); }
    /// Empty when usable; else one line naming the field ("model: required for openai").
    QString validate() const;

    static SearchSettings load(const QSettings& settings);
    void save(QSettings& settings) const;

    bool operator==(const SearchSettings&) const = default;
};

} // namespace kforge::app
