# Run at every build (cmake -P): writes OUT with the git commit the source
# tree is at, "-dirty" when tracked files differ from it, or "" outside a
# git checkout, and leaves OUT untouched when that did not change, so a
# build without a new commit compiles nothing again.
#   cmake -DSRC=<source dir> -DOUT=<generated .cpp> -P ZlCommit.cmake
set(commit "")
find_package(Git QUIET)
if(GIT_FOUND)
  execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${SRC}" rev-parse HEAD
    OUTPUT_VARIABLE sha RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(rc EQUAL 0 AND sha MATCHES "^[0-9a-f]+$")
    set(commit "${sha}")
    execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${SRC}" status --porcelain --untracked-files=no
      OUTPUT_VARIABLE changes RESULT_VARIABLE rc ERROR_QUIET)
    if(rc EQUAL 0 AND NOT changes STREQUAL "")
      set(commit "${commit}-dirty")
    endif()
  endif()
endif()
set(text "// Written at build time by cmake/ZlCommit.cmake: the commit zlcore was built from.\n#include \"${SRC}/core/src/util/build_commit.hpp\"\n\nnamespace zl {\nconst char* build_commit() { return \"${commit}\"; }\n}  // namespace zl\n")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
