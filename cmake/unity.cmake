# The unity build (HEADROOM_UNITY): each source folder's files of a target compiled as one
# file, which parses the headers they share (the standard library, fmt, JSON, CLI11,
# GoogleTest) once a folder instead of once a file (docs/install.md, "Build times").
# One group a folder, not CMake's batches of N files in path order: adding a file then changes
# only its own folder's group, so the set of files whose file-local names must not collide
# is the folder (docs/style.md, "File-local names").
function(headroom_unity_by_folder target)
  get_target_property(sources ${target} SOURCES)
  foreach(source IN LISTS sources)
    if(NOT source MATCHES "\\.cc$")
      continue()
    endif()
    cmake_path(ABSOLUTE_PATH source BASE_DIRECTORY ${PROJECT_SOURCE_DIR} OUTPUT_VARIABLE path)
    cmake_path(IS_PREFIX PROJECT_SOURCE_DIR "${path}" NORMALIZE in_tree)
    cmake_path(IS_PREFIX CMAKE_BINARY_DIR "${path}" NORMALIZE in_build)
    if(NOT in_tree OR in_build)
      continue()  # generated files (the report template, the git revision) stay alone
    endif()
    cmake_path(GET path PARENT_PATH folder)
    cmake_path(RELATIVE_PATH folder BASE_DIRECTORY ${PROJECT_SOURCE_DIR})
    string(MAKE_C_IDENTIFIER "${folder}" group)
    set_property(SOURCE ${source} TARGET_DIRECTORY ${target} PROPERTY UNITY_GROUP ${group})
  endforeach()
  set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_MODE GROUP)
endfunction()
