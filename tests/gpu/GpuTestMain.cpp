// main() for GPU tests: without a usable CUDA device the whole binary reports "skipped" to ctest
// (exit code 77, SKIP_RETURN_CODE) instead of passing silently.

#include <gtest/gtest.h>
#include <torch/cuda.h>

#include <cstdio>

int main(int argc, char** argv)
{
    if (!torch::cuda::is_available()) {
        std::printf("SKIPPED: no usable CUDA device (this build %s LibTorch's CUDA backend)\n",
#ifdef KFORGE_TORCH_CUDA
                    "links"
#else
                    "does not link"
#endif
        );
        return 77;
    }
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
