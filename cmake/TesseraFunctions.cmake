# tessera_add_library(<target> SOURCES a.tsr ... [ARCHS 80 90 ...]
#                     [GPU_CODE auto|fatbin|ptx|none] [HOST_CPU generic|native|<cpu>]
#                     [OPTIONS <more tesserac options>...])
#
# Compiles each .tsr file ahead of time with `tesserac -c` (docs/aot.md) into
# an object and a C++ header named after the file, and makes <target> a
# static library of the objects that links tessera::runtime and puts the
# headers on its users' include path: `#include "a.h"` and call a::kernel(...).
# Editing a .tsr file (or updating tesserac) recompiles it. ARCHS are compute
# capabilities (80, 90, 90a, 100, ...): the fatbin holds a cubin for each and
# PTX of the newest; the default is 80.
#
# Needs the imported targets tessera::tesserac and tessera::runtime, which
# find_package(Tessera) provides (the tesserac build tree makes them too).
function(tessera_add_library target)
  cmake_parse_arguments(ARG "" "GPU_CODE;HOST_CPU" "SOURCES;ARCHS;OPTIONS" ${ARGN})
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "tessera_add_library(${target}): no SOURCES given")
  endif()
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "tessera_add_library(${target}): unknown arguments: ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  set(archs "")
  foreach(arch IN LISTS ARG_ARCHS)
    string(REGEX REPLACE "^(sm_|compute_)" "" arch "${arch}")
    list(APPEND archs "sm_${arch}")
  endforeach()
  if(NOT archs)
    set(archs sm_80)
  endif()
  list(JOIN archs "," arch_list)
  set(options -arch=${arch_list})
  if(ARG_GPU_CODE)
    list(APPEND options --gpu-code=${ARG_GPU_CODE})
  endif()
  if(ARG_HOST_CPU)
    list(APPEND options --host-cpu=${ARG_HOST_CPU})
  endif()
  list(APPEND options ${ARG_OPTIONS})

  set(out_dir "${CMAKE_CURRENT_BINARY_DIR}/${target}.tessera")
  file(MAKE_DIRECTORY "${out_dir}")
  set(objects "")
  set(headers "")
  foreach(source IN LISTS ARG_SOURCES)
    get_filename_component(path "${source}" ABSOLUTE)
    get_filename_component(stem "${source}" NAME_WE)
    set(object "${out_dir}/${stem}.o")
    set(header "${out_dir}/${stem}.h")
    add_custom_command(
      OUTPUT "${object}" "${header}"
      COMMAND tessera::tesserac -c "${path}" -o "${object}" --header "${header}" ${options}
      DEPENDS "${path}" "$<TARGET_FILE:tessera::tesserac>"
      COMMENT "tesserac -c ${source}"
      VERBATIM)
    list(APPEND objects "${object}")
    list(APPEND headers "${header}")
  endforeach()
  set_source_files_properties(${objects} PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)
  add_library(${target} STATIC ${objects} ${headers})
  set_target_properties(${target} PROPERTIES LINKER_LANGUAGE CXX)
  target_include_directories(${target} PUBLIC "${out_dir}")
  target_link_libraries(${target} PUBLIC tessera::runtime)
  # Users' sources include the headers: generate them before those compile.
  add_custom_target(${target}_headers DEPENDS ${headers})
  add_dependencies(${target} ${target}_headers)
endfunction()
