#pragma once
// A realistic project built from value types only (a transformer block captured on an H200), for
// the GUI tests and the screenshot. No torch needed.

#include "model/Project.h"

#include <QString>

namespace kforge::app::test {

/// Twelve cards: layer norm, attention (linear, matmuls over transposed views, scale, softmax),
/// MLP (linear, gelu), residual adds, an untimed dropout. Shares are consistent with the timings.
core::Project makeFixtureProject();

/// Writes makeFixtureProject() (or `project`) into `dir` (created if needed); false on failure.
bool writeFixtureProject(const QString& dir);
bool writeProject(const QString& dir, const core::Project& project);

} // namespace kforge::app::test
