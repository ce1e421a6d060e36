#pragma once
// Exception text in the format of LibTorch's c10::Error::what(), written by hand (no LibTorch in
// the tests that use it): the message, then "Exception raised from ... (most recent call first):"
// and one "frame #N: ..." line per frame. The one such builder of the core tests.

#include <string>

namespace kforge::core::test {

/// The message of a CUDA out-of-memory in the caching allocator, as c10 words it (one line).
inline const std::string kC10OutOfMemory = "CUDA out of memory. Tried to allocate 256.00 MiB. GPU 0 has a total "
                                           "capacity of 139.81 GiB of which 12.44 MiB is free.";

/// `message` followed by a c10 backtrace of `frames` frames.
inline std::string c10ErrorText(const std::string& message, int frames)
{
    std::string text = message +
        "\nException raised from malloc at /pytorch/c10/cuda/CUDACachingAllocator.cpp:1313 "
        "(most recent call first):\n";
    for (int i = 0; i < frames; ++i)
        text += "frame #" + std::to_string(i) + ": c10::Error::Error(c10::SourceLocation, std::string) + 0x" +
            std::to_string(96 + i) + " (0x7f2a1c0e5446 in /opt/libtorch/lib/libc10.so)\n";
    return text;
}

} // namespace kforge::core::test
