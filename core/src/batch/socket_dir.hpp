// Where a batch's warm workers listen: a private directory under /tmp (a Unix
// socket's path is limited to 108 bytes; a batch directory's is not). The
// directory is named after the batch's pid, zlw-<pid>-XXXXXX, so that one a
// killed batch could not remove (SIGKILL, a lost node) is found and removed
// by the next batch on the machine instead of piling up in /tmp.
#pragma once

#include <string>

namespace zl::batch {

// Removes what killed batches left in `parent` (their zlw-<pid>-* directories
// whose pid is gone), then makes this process's own, mode 0700. "" when it
// cannot be made: the batch then runs its ops cold. Only directories owned by
// this user are touched; a link of that name is never followed.
std::string make_socket_dir(const std::string& parent = "/tmp");

// The sweep alone; the number of directories removed.
int remove_abandoned_socket_dirs(const std::string& parent);

}  // namespace zl::batch
