#pragma once
// The device's measured copy bandwidth (bytes read + written per second by a device-to-device
// copy), the reference for "fraction of achievable bandwidth" and for rejecting timings that beat
// the memory floor. Measured once per GPU model and cached in
// $XDG_CACHE_HOME/kforge/copy-bandwidth/<gpu name>.json (~/.cache when unset).
// GPU worker only (CUDA build). Thread: the worker thread.

#include "util/Result.h"

namespace kforge::core {

/// Bytes per second; measures (1 GiB copied 10 times, median) when no cached value exists.
Result<double> deviceCopyBandwidth(int deviceIndex);

} // namespace kforge::core
