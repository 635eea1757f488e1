// Directory links inside an output directory zlcore writes. A file link is
// refused where the file is written (atomic_file.cpp); a directory of ours
// replaced by a link (<out>/runs pointing elsewhere) would carry everything
// zlcore puts under it there: new runs, attempts moved aside, leases. A batch
// or an A/B therefore refuses its --out while a directory it keeps there is a
// link, or holds a link that leads to a directory or to nothing, before it
// writes anything in it.
#pragma once

#include <string>

namespace zl {

// The directories a batch or an A/B creates directly in its --out. Only these
// are looked through: --out itself may be any directory of the user's.
extern const char* const kOutputSubdirs[];

// The first such link under `root`, as "<link> (a link to <target>)"; ""
// when there is none. Links are never followed while looking.
std::string directory_link_under(const std::string& root);

// Throws UsageError (exit 2) with one line naming the link, after `prefix`
// ("ab: ", or "" for batch), when directory_link_under(root) finds one.
void refuse_directory_links(const std::string& root, const std::string& prefix);

}  // namespace zl
