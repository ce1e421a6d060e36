# kforge_add_library(NAME [SHARED] SOURCES...): a library of one folder (the current source
# directory), whose headers its users include as "<folder name>/Header.h".
#
# The include path a library exposes holds only that one folder: ${CMAKE_BINARY_DIR}/include/NAME
# contains a single symbolic link, named after the folder, to the folder itself. So a file can
# include a header only of a library it links (directly, or through a PUBLIC link), and the
# compiler enforces the link graph of docs/architecture.md: an include of a library not linked
# fails to compile instead of growing a hidden dependency.
#
# Libraries link each other PRIVATE unless one of their own headers includes the other's.
function(kforge_add_library name)
  cmake_parse_arguments(ARG "SHARED" "" "" ${ARGN})
  if(ARG_SHARED)
    add_library(${name} SHARED ${ARG_UNPARSED_ARGUMENTS})
  else()
    add_library(${name} STATIC ${ARG_UNPARSED_ARGUMENTS})
  endif()
  get_filename_component(folder_name ${CMAKE_CURRENT_SOURCE_DIR} NAME)
  set(include_root ${CMAKE_BINARY_DIR}/include/${name})
  file(MAKE_DIRECTORY ${include_root})
  file(REMOVE ${include_root}/${folder_name}) # a link left by a build of another checkout
  file(CREATE_LINK ${CMAKE_CURRENT_SOURCE_DIR} ${include_root}/${folder_name} SYMBOLIC)
  target_include_directories(${name} PUBLIC ${include_root})
endfunction()
