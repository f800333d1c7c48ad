# CUDA is optional: HEARTH_WITH_CUDA defaults to ON when a CUDA compiler is
# found, and nothing outside the CUDA executor depends on it.
include(CheckLanguage)
if(NOT DEFINED HEARTH_WITH_CUDA)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    set(_hearth_cuda_default ON)
  else()
    set(_hearth_cuda_default OFF)
  endif()
endif()
option(HEARTH_WITH_CUDA "Build the CUDA step executor" ${_hearth_cuda_default})
if(HEARTH_WITH_CUDA)
  # Set before enable_language(CUDA), which would otherwise fill in nvcc's
  # own default (sm_75 with nvcc 13).
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 80-real 86-real 89-real 90-real 90-virtual)
  endif()
  enable_language(CUDA)
  find_package(CUDAToolkit REQUIRED)
endif()
