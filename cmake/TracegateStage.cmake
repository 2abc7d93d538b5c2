# One CMake target per pipeline stage (docs/ARCHITECTURE.md).
#
#   tracegate_stage(<target> <folder> [PUBLIC deps...] [PRIVATE deps...] [CUDA_FREE])
#
# builds the static library <target> from <folder>/*.cpp (one folder, not recursive). Internal
# headers are included by their path from the repository root ("analyzer/util/fileio.h"), which
# tracegate_internal provides to the stage and nothing else; public headers come from each
# library's include/ ("tracegate/analyzer/model.h"). CUDA_FREE fails the configure if the stage
# ever links a CUDA library: the analyzer and the reports must build on a machine without the
# toolkit.

# Repository-root include path for internal headers: stages, the CLI and the tests link it;
# a program outside this repository would use the public headers only.
add_library(tracegate_internal INTERFACE)
target_include_directories(tracegate_internal INTERFACE ${PROJECT_SOURCE_DIR})

function(tracegate_stage target folder)
  cmake_parse_arguments(S "CUDA_FREE" "" "PUBLIC;PRIVATE" ${ARGN})
  file(GLOB _sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/${folder}/*.cpp)
  if(NOT _sources)
    message(FATAL_ERROR "tracegate_stage(${target}): no sources in ${folder}/")
  endif()
  add_library(${target} STATIC ${_sources})
  target_link_libraries(${target} PUBLIC ${S_PUBLIC} PRIVATE tracegate_internal ${S_PRIVATE})
  if(S_CUDA_FREE)
    foreach(_lib IN LISTS S_PUBLIC S_PRIVATE)
      if(_lib MATCHES "CUDA::|cupti|cudart|cublas|cudnn|nvtx")
        message(FATAL_ERROR "${target} (${folder}/) must not depend on CUDA (found ${_lib})")
      endif()
    endforeach()
  endif()
endfunction()
