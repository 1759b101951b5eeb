# Decides whether the CUDA backend is built and sets its architectures.
# sm_90 machine code + compute_90 PTX for every kernel; files that use Hopper-only
# instructions (wgmma, setmaxnreg) add sm_90a through zt_hopper_only().
set(ZT_WITH_CUDA OFF)
if(ZT_CUDA STREQUAL "AUTO")
  include(CheckLanguage)
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    set(ZT_WITH_CUDA ON)
  endif()
elseif(ZT_CUDA)
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  set(ZT_WITH_CUDA ON)
endif()

if(ZT_WITH_CUDA)
  if(NOT CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 90-real 90-virtual)
  endif()
  enable_language(CUDA)
  # CMake 3.25 does not know nvcc 13's C++20 flag; tell it.
  set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
  set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
  set(CMAKE_CUDA_STANDARD 20)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  find_package(CUDAToolkit REQUIRED)
  message(STATUS "zerotrain: CUDA backend ON (${CMAKE_CUDA_COMPILER}, archs ${CMAKE_CUDA_ARCHITECTURES})")
else()
  message(STATUS "zerotrain: CUDA backend OFF (CPU-only build)")
endif()

# Adds sm_90a machine code to the given source files (Hopper-only instructions).
function(zt_hopper_only)
  set_source_files_properties(${ARGN} PROPERTIES COMPILE_OPTIONS
    "-gencode=arch=compute_90a,code=sm_90a")
endfunction()
