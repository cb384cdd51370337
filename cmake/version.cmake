# Writes version.cpp with the current git hash; run at every build so the hash
# recorded in outputs is the commit the binary was built from. Rewrites only on change.
execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY ${SOURCE_DIR}
                OUTPUT_VARIABLE TESSERA_GIT_HASH OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT TESSERA_GIT_HASH)
  set(TESSERA_GIT_HASH "unknown")
endif()
execute_process(COMMAND git status --porcelain --untracked-files=no WORKING_DIRECTORY ${SOURCE_DIR}
                OUTPUT_VARIABLE dirty OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(dirty)
  string(APPEND TESSERA_GIT_HASH "-dirty")
endif()
configure_file(${SOURCE_DIR}/src/core/version.cpp.in ${OUTPUT}.new @ONLY)
file(COPY_FILE ${OUTPUT}.new ${OUTPUT} ONLY_IF_DIFFERENT)
