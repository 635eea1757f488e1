// A file that uses batch: it compiles only where batch's public headers are
// on the include path, i.e. in zl_batch and the layers that link it.
#include "zlcore/batch.hpp"

bool passed_is_settled() { return zl::batch::is_settled(zl::batch::Status::passed); }
