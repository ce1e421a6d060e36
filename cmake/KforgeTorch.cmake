# Finds LibTorch inside the torch package of ${KFORGE_PYTHON} and defines the imported target
# kforge::torch. Only the few core files that need LibTorch link it (build time on 2 cores).
#
# The CPU-only build links torch_cpu + c10 (libtorch_cuda.so needs cusparseLt, nvshmem and cufile,
# which a machine without torch's nvidia-* packages lacks). With KFORGE_TORCH_CUDA the CUDA backend
# is linked too, with --no-as-needed so its static registrations (the CUDA device guard, allocator)
# run even though no symbol of it is referenced directly.

execute_process(
  COMMAND ${KFORGE_PYTHON} -c "import os, torch; print(os.path.dirname(torch.__file__)); print(torch.__version__); print(int(torch._C._GLIBCXX_USE_CXX11_ABI))"
  OUTPUT_VARIABLE _kforge_torch_out
  ERROR_VARIABLE _kforge_torch_err
  RESULT_VARIABLE _kforge_torch_rc
  OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT _kforge_torch_rc EQUAL 0)
  message(FATAL_ERROR "Kernel Forge needs torch 2.11 in ${KFORGE_PYTHON} (run packaging/bootstrap.sh or pass -DKFORGE_PYTHON=...): ${_kforge_torch_err}")
endif()
string(REPLACE "\n" ";" _kforge_torch_out "${_kforge_torch_out}")
list(GET _kforge_torch_out 0 KFORGE_TORCH_DIR)
list(GET _kforge_torch_out 1 KFORGE_TORCH_VERSION)
list(GET _kforge_torch_out 2 _kforge_torch_abi)
if(NOT KFORGE_TORCH_VERSION MATCHES "^2\\.11\\.")
  message(FATAL_ERROR "Kernel Forge needs torch 2.11.x, ${KFORGE_PYTHON} has ${KFORGE_TORCH_VERSION}")
endif()

set(_kforge_torch_lib ${KFORGE_TORCH_DIR}/lib)
if(KFORGE_TORCH_CUDA STREQUAL "AUTO")
  find_program(KFORGE_NVIDIA_SMI nvidia-smi)
  if(EXISTS ${_kforge_torch_lib}/libtorch_cuda.so AND (EXISTS /proc/driver/nvidia/version OR KFORGE_NVIDIA_SMI))
    set(KFORGE_TORCH_CUDA_ENABLED ON)
  else()
    set(KFORGE_TORCH_CUDA_ENABLED OFF)
  endif()
else()
  set(KFORGE_TORCH_CUDA_ENABLED ${KFORGE_TORCH_CUDA})
endif()

add_library(kforge_torch INTERFACE)
add_library(kforge::torch ALIAS kforge_torch)
target_include_directories(kforge_torch SYSTEM INTERFACE
  ${KFORGE_TORCH_DIR}/include
  ${KFORGE_TORCH_DIR}/include/torch/csrc/api/include)
target_compile_definitions(kforge_torch INTERFACE _GLIBCXX_USE_CXX11_ABI=${_kforge_torch_abi})
set(_kforge_torch_libs ${_kforge_torch_lib}/libtorch_cpu.so ${_kforge_torch_lib}/libc10.so)
if(KFORGE_TORCH_CUDA_ENABLED)
  target_link_libraries(kforge_torch INTERFACE
    "-Wl,--no-as-needed" ${_kforge_torch_lib}/libtorch_cuda.so ${_kforge_torch_lib}/libc10_cuda.so "-Wl,--as-needed")
  target_compile_definitions(kforge_torch INTERFACE KFORGE_TORCH_CUDA=1)
  # ATen's CUDA headers include the CUDA runtime headers of the toolkit (/usr/local/cuda).
  if(NOT CUDAToolkit_ROOT AND EXISTS /usr/local/cuda)
    set(CUDAToolkit_ROOT /usr/local/cuda)
  endif()
  find_package(CUDAToolkit REQUIRED)
  target_include_directories(kforge_torch SYSTEM INTERFACE ${CUDAToolkit_INCLUDE_DIRS})
endif()
target_link_libraries(kforge_torch INTERFACE ${_kforge_torch_libs})
# Executables find the torch libraries where the package keeps them.
set(CMAKE_BUILD_RPATH ${CMAKE_BUILD_RPATH} ${_kforge_torch_lib})
set(CMAKE_INSTALL_RPATH ${CMAKE_INSTALL_RPATH} ${_kforge_torch_lib})
