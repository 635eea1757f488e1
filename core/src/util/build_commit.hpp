// The git commit zlcore was built from ("<sha>" or "<sha>-dirty"), "" when
// it was built outside a git checkout: written at every build
// (cmake/ZlCommit.cmake), recorded in each run's identity.
#pragma once

namespace zl {
const char* build_commit();
}  // namespace zl
