// What people see: on a terminal one progress line redrawn in place (done /
// total, what runs on each device, elapsed, estimate) with event lines above
// it; elsewhere plain event lines, and a "still running" heartbeat line when
// nothing was printed for ZL_BATCH_HEARTBEAT_S (60) seconds; a summary table
// at the end.
#pragma once

#include <string>
#include <vector>

#include "scheduler.hpp"

namespace zl::batch {

class Progress {
 public:
  Progress(bool tty, size_t total, size_t done_before);
  void set_phase(const std::string& phase, size_t jobs);
  // A line that stays (an op finished, a device is busy, ...).
  void line(const std::string& text);
  void op_done();
  void tick(const std::vector<InFlight>& running);
  void clear();

 private:
  void draw(const std::vector<InFlight>& running);
  void heartbeat(const std::vector<InFlight>& running);

  bool tty_;
  size_t total_, done_;
  std::string phase_;
  size_t phase_jobs_ = 0, phase_done_ = 0;
  double started_, phase_started_;
  double last_draw_ = 0;
  double last_line_;    // when the last line was printed (the heartbeat's clock)
  double heartbeat_s_;  // ZL_BATCH_HEARTBEAT_S
  bool drawn_ = false;
  std::vector<InFlight> last_running_;
};

// The table printed at the end: one line per op, then the counts.
// `not_run` names the ops that have no row (an interrupt came first).
std::string summary_table(const std::vector<OpRow>& rows, const std::vector<std::string>& not_run, double seconds);

}  // namespace zl::batch
