// SIGINT and SIGTERM become a counter the event loops poll, so zlcore can
// stop its children, write their rows as interrupted and exit cleanly; a
// second Ctrl-C only bumps the counter again (nothing is written from the
// handler itself, so nothing can be corrupted by it).
#pragma once

namespace zl::signals {

// Installs the handlers (idempotent). Without SA_RESTART, so a blocking poll
// returns EINTR at once.
void install();
// How many SIGINT/SIGTERM arrived since install().
int interrupt_count();
// The last signal number received (SIGINT or SIGTERM), 0 if none.
int last_signal();

}  // namespace zl::signals
