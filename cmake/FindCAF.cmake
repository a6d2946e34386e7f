# Locates CAF 0.17 (the C++ Actor Framework). Debian's libcaf-dev ships neither
# a CMake package nor a pkg-config file, so the headers and libraries are found
# directly and the version is read from caf/config.hpp (CAF_VERSION 1706 = 0.17.6).
#
# Defines CAF_FOUND, CAF_VERSION and the imported targets CAF::core, CAF::io
# and (when present) CAF::openssl.
find_path(CAF_INCLUDE_DIR NAMES caf/config.hpp)
find_library(CAF_CORE_LIBRARY NAMES caf_core)
find_library(CAF_IO_LIBRARY NAMES caf_io)
find_library(CAF_OPENSSL_LIBRARY NAMES caf_openssl)

if(CAF_INCLUDE_DIR)
  file(STRINGS "${CAF_INCLUDE_DIR}/caf/config.hpp" _caf_line REGEX "^#define CAF_VERSION [0-9]+")
  if(_caf_line MATCHES "CAF_VERSION ([0-9]+)")
    set(_v "${CMAKE_MATCH_1}")
    math(EXPR _major "${_v} / 10000")
    math(EXPR _minor "(${_v} / 100) % 100")
    math(EXPR _patch "${_v} % 100")
    set(CAF_VERSION "${_major}.${_minor}.${_patch}")
  endif()
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(CAF
  REQUIRED_VARS CAF_CORE_LIBRARY CAF_IO_LIBRARY CAF_INCLUDE_DIR
  VERSION_VAR CAF_VERSION)

if(CAF_FOUND)
  find_package(Threads REQUIRED)
  foreach(_part core io openssl)
    string(TOUPPER "${_part}" _up)
    if(CAF_${_up}_LIBRARY AND NOT TARGET CAF::${_part})
      add_library(CAF::${_part} SHARED IMPORTED)
      set_target_properties(CAF::${_part} PROPERTIES IMPORTED_LOCATION "${CAF_${_up}_LIBRARY}")
    endif()
  endforeach()
  set_target_properties(CAF::core PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${CAF_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES Threads::Threads)
  set_target_properties(CAF::io PROPERTIES INTERFACE_LINK_LIBRARIES CAF::core)
  if(TARGET CAF::openssl)
    set_target_properties(CAF::openssl PROPERTIES INTERFACE_LINK_LIBRARIES CAF::io)
  endif()
endif()
mark_as_advanced(CAF_INCLUDE_DIR CAF_CORE_LIBRARY CAF_IO_LIBRARY CAF_OPENSSL_LIBRARY)
