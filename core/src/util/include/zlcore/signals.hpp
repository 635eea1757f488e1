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

// SIGINT and SIGTERM are how people (Ctrl-C, kill) and schedulers (scancel, a
// time limit) ask a process to stop; a child that died of one was stopped,
// never crashed, whoever sent it.
bool is_stop_signal(int sig);

// A child of ours died of a stop signal. scancel and `kill` of a process tree
// signal every process of it in turn, so a child can die of it before our own
// handler has run: what failed because of it is an interruption, and
// children_stopped() lets the caller say so without waiting for the signal.
void note_child_stopped(int sig);
int children_stopped();

}  // namespace zl::signals
