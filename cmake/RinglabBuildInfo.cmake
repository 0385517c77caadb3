# cmake -DSOURCE_DIR=... -DOUTPUT=... -DVERSION=... -DFLAGS_FILE=... -P RinglabBuildInfo.cmake
#
# Writes OUTPUT, a C++ header saying which source the binary was built from: the project version,
# the git commit of SOURCE_DIR, whether tracked files had uncommitted changes, and the compiler
# flags (the text of FLAGS_FILE, written at configure time). bench/ runs it at every build, so the
# commit is the one built rather than the one configured; the header is rewritten only when its
# text changes, so an unchanged commit recompiles nothing. Without git, or outside a work tree, the
# commit is "unknown" and the dirty flag -1 (unknown).
set(commit "unknown")
set(dirty -1)
find_package(Git QUIET)
if(GIT_FOUND)
  # The work tree must be the source's own: a source tree unpacked inside some other repository
  # would otherwise report that repository's commit.
  execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SOURCE_DIR} rev-parse --show-toplevel
                  OUTPUT_VARIABLE top RESULT_VARIABLE top_status OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SOURCE_DIR} rev-parse HEAD
                  OUTPUT_VARIABLE head RESULT_VARIABLE head_status OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  file(REAL_PATH "${SOURCE_DIR}" source_real)
  set(top_real "")
  if(top_status EQUAL 0)
    file(REAL_PATH "${top}" top_real)
  endif()
  if(head_status EQUAL 0 AND NOT head STREQUAL "" AND top_real STREQUAL source_real)
    set(commit "${head}")
    # --no-optional-locks: reading the status must not take the index lock from a commit under way.
    execute_process(COMMAND ${GIT_EXECUTABLE} --no-optional-locks -C ${SOURCE_DIR} status --porcelain --untracked-files=no
                    OUTPUT_VARIABLE changes RESULT_VARIABLE status_status ERROR_QUIET)
    if(status_status EQUAL 0)
      if(changes STREQUAL "")
        set(dirty 0)
      else()
        set(dirty 1)
      endif()
    endif()
  endif()
endif()
set(flags "")
if(EXISTS "${FLAGS_FILE}")
  file(READ "${FLAGS_FILE}" flags)
  string(STRIP "${flags}" flags)
endif()
set(text "#pragma once
// Generated at build time by cmake/RinglabBuildInfo.cmake: which source this binary was built from.
#define RINGLAB_PROJECT_VERSION \"${VERSION}\"
#define RINGLAB_GIT_COMMIT \"${commit}\"
#define RINGLAB_GIT_DIRTY ${dirty}  // 1 uncommitted changes to tracked files, 0 none, -1 unknown
#define RINGLAB_COMPILER_FLAGS R\"ringlab_flags(${flags})ringlab_flags\"
")
set(old "")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUTPUT}" "${text}")
endif()
