#include "zlcore/signals.hpp"

#include <signal.h>

#include <atomic>

namespace zl::signals {
namespace {

std::atomic<int> g_count{0};
std::atomic<int> g_last{0};
std::atomic<int> g_children_stopped{0};

extern "C" void on_signal(int sig) {
  g_last.store(sig);
  g_count.fetch_add(1);
}

}  // namespace

void install() {
  static bool done = false;
  if (done) return;
  done = true;
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: poll() must wake up
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  // A closed pipe to a reader (| head) must not kill us mid-write.
  signal(SIGPIPE, SIG_IGN);
}

int interrupt_count() { return g_count.load(); }
int last_signal() { return g_last.load(); }

bool is_stop_signal(int sig) { return sig == SIGINT || sig == SIGTERM; }

void note_child_stopped(int sig) {
  if (is_stop_signal(sig)) g_children_stopped.fetch_add(1);
}
int children_stopped() { return g_children_stopped.load(); }

}  // namespace zl::signals
