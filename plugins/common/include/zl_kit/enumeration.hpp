// The in-tree backends' view of the SDK's backend kit: the kit itself is
// installed with the SDK (zl/backend_kit.hpp) so that in-tree and
// out-of-tree backends build their lists, errors and tables the same way.
#pragma once

#include <zl/backend_kit.hpp>
