# Finds SLEEF (https://sleef.org), the vector math library behind ptocpu's transcendental ops
# (docs/ops/exp.md#numerics), and defines the imported target SLEEF::sleef.
# Debian / Ubuntu: apt-get install libsleef-dev. Elsewhere: point SLEEF_ROOT (or CMAKE_PREFIX_PATH)
# at an installation.
find_path(SLEEF_INCLUDE_DIR sleef.h)
find_library(SLEEF_LIBRARY sleef)
mark_as_advanced(SLEEF_INCLUDE_DIR SLEEF_LIBRARY)

if(SLEEF_INCLUDE_DIR AND SLEEF_LIBRARY)
  set(SLEEF_FOUND TRUE)
  if(NOT TARGET SLEEF::sleef)
    # GLOBAL: a project that adds ptocpu with add_subdirectory links it from its own directory.
    add_library(SLEEF::sleef UNKNOWN IMPORTED GLOBAL)
    set_target_properties(SLEEF::sleef PROPERTIES IMPORTED_LOCATION "${SLEEF_LIBRARY}"
                                                  INTERFACE_INCLUDE_DIRECTORIES "${SLEEF_INCLUDE_DIR}")
  endif()
else()
  set(SLEEF_FOUND FALSE)
  if(SLEEF_FIND_REQUIRED)
    message(FATAL_ERROR "ptocpu needs SLEEF, the vector math library (sleef.h: ${SLEEF_INCLUDE_DIR}, "
                        "libsleef: ${SLEEF_LIBRARY}). Install it with `apt-get install libsleef-dev`, "
                        "or set SLEEF_ROOT to an installation.")
  endif()
endif()
