#include "progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <sstream>

#include "../util/printable.hpp"
#include "zlcore/process.hpp"

namespace zl::batch {
namespace {

std::string duration(double s) {
  char buf[32];
  long t = static_cast<long>(s + 0.5);
  if (t >= 3600) {
    std::snprintf(buf, sizeof buf, "%ldh%02ldm", t / 3600, (t / 60) % 60);
  } else if (t >= 60) {
    std::snprintf(buf, sizeof buf, "%ldm%02lds", t / 60, t % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%.1fs", s);
  }
  return buf;
}

// A log that stays silent for the length of a long op reads as a hung batch
// (CI kills jobs that print nothing for 10 minutes). Seconds, default 60.
double heartbeat_seconds() {
  constexpr double kDefault = 60;
  const char* v = std::getenv("ZL_BATCH_HEARTBEAT_S");
  if (v == nullptr || *v == '\0') return kDefault;
  char* end = nullptr;
  const double s = std::strtod(v, &end);
  if (end == v || *end != '\0' || !(s > 0) || s > 86400) {
    std::cerr << "zlcore: ZL_BATCH_HEARTBEAT_S='" << v << "' is not a number of seconds in (0, 86400]; using 60\n";
    return kDefault;
  }
  return s;
}

std::string running_text(const std::vector<InFlight>& running) {
  std::vector<InFlight> sorted = running;
  std::sort(sorted.begin(), sorted.end(),
            [](const InFlight& a, const InFlight& b) { return a.device_index < b.device_index; });
  std::string out;
  for (const InFlight& r : sorted)
    out += " " + std::to_string(r.device_index) + ":" + printable(r.op) + " " + duration(r.seconds);
  return out;
}

}  // namespace

Progress::Progress(bool tty, size_t total, size_t done_before)
    : tty_(tty),
      total_(total),
      done_(done_before),
      started_(monotonic_seconds()),
      phase_started_(started_),
      last_line_(started_),
      heartbeat_s_(tty ? 0 : heartbeat_seconds()) {}

void Progress::set_phase(const std::string& phase, size_t jobs) {
  phase_ = phase;
  phase_jobs_ = jobs;
  phase_done_ = 0;
  phase_started_ = monotonic_seconds();
}

void Progress::clear() {
  if (tty_ && drawn_) {
    std::cout << "\r\033[K" << std::flush;
    drawn_ = false;
  }
}

void Progress::line(const std::string& text) {
  clear();
  std::cout << printable(text) << "\n" << std::flush;
  // The next tick redraws the progress line with what still runs.
  last_draw_ = 0;
  last_line_ = monotonic_seconds();
}

void Progress::op_done() {
  ++phase_done_;
  if (phase_ != "warm-up" && phase_ != "compile") ++done_;  // neither pass gives the op its row
}

void Progress::tick(const std::vector<InFlight>& running) {
  last_running_ = running;
  if (!tty_) return heartbeat(running);
  const double now = monotonic_seconds();
  if (now - last_draw_ < 0.25) return;
  draw(running);
}

void Progress::heartbeat(const std::vector<InFlight>& running) {
  const double now = monotonic_seconds();
  if (running.empty() || now - last_line_ < heartbeat_s_) return;
  std::ostringstream out;
  out << "still running:" << running_text(running) << " | ";
  if (phase_ == "warm-up" || phase_ == "compile") {
    out << phase_ << " " << phase_done_ << "/" << phase_jobs_;
  } else {
    out << done_ << "/" << total_ << " done";
  }
  out << " | " << duration(now - started_);
  line(out.str());
}

void Progress::draw(const std::vector<InFlight>& running) {
  if (!tty_) return;
  last_draw_ = monotonic_seconds();
  const double elapsed = last_draw_ - started_;
  std::ostringstream out;
  if (phase_ == "warm-up" || phase_ == "compile") {
    out << phase_ << " " << phase_done_ << "/" << phase_jobs_;
  } else {
    out << done_ << "/" << total_ << " done";
  }
  out << " |" << running_text(running) << " | " << duration(elapsed);
  // Throughput so far in this phase times what is left of it.
  const double phase_elapsed = last_draw_ - phase_started_;
  if (phase_done_ > 0 && phase_jobs_ > phase_done_) {
    out << " | ~" << duration(phase_elapsed / phase_done_ * (phase_jobs_ - phase_done_)) << " left";
  }
  std::string text = out.str();
  const size_t width = 200;
  if (text.size() > width) text = text.substr(0, width - 3) + "...";
  std::cout << "\r\033[K" << text << std::flush;
  drawn_ = true;
}

constexpr size_t kListAllUpTo = 40;

std::string summary_table(const std::vector<OpRow>& rows, const std::vector<std::string>& not_run, double seconds) {
  size_t op_w = 2, status_w = 6;
  for (const OpRow& r : rows) {
    op_w = std::max(op_w, printable(r.op).size());
    status_w = std::max(status_w, std::string(to_string(r.status)).size());
  }
  std::ostringstream out;
  char buf[512];
  std::snprintf(buf, sizeof buf, "%-*s  %-*s  %6s  %9s  %s\n", static_cast<int>(op_w), "op", static_cast<int>(status_w),
                "status", "device", "seconds", "reason");
  out << buf;
  std::map<std::string, int> counts;
  // A whole-suite batch has hundreds of passed ops: past a screenful, the
  // table lists only those that need a look, and the counts say the rest.
  const bool list_passed = rows.size() <= kListAllUpTo;
  size_t unlisted = 0;
  for (const OpRow& r : rows) {
    if (!list_passed && r.status == Status::passed) {
      counts[to_string(r.status)]++;
      ++unlisted;
      continue;
    }
    std::string reason = printable(r.reason);
    if (r.status == Status::crashed && r.signal && reason.find("signal") == std::string::npos) {
      reason = "signal " + std::to_string(r.signal) + (reason.empty() ? "" : ": " + reason);
    }
    if (reason.size() > 80) reason = reason.substr(0, 77) + "...";
    std::snprintf(buf, sizeof buf, "%-*s  %-*s  %6s  %9.1f  %s\n", static_cast<int>(op_w), printable(r.op).c_str(),
                  static_cast<int>(status_w), to_string(r.status),
                  r.device_index < 0 ? "-" : std::to_string(r.device_index).c_str(), r.seconds, reason.c_str());
    std::string line = buf;
    line.erase(line.find_last_not_of(" \n") + 1);
    out << line << "\n";
    counts[to_string(r.status)]++;
  }
  for (const std::string& raw : not_run) {
    const std::string name = printable(raw);
    std::snprintf(buf, sizeof buf, "%-*s  %-*s  %6s  %9s  %s\n", static_cast<int>(std::max(op_w, name.size())),
                  name.c_str(), static_cast<int>(status_w), "-", "-", "-", "not run; --resume runs it");
    out << buf;
  }
  if (unlisted > 0) out << "(" << unlisted << " passed ops not listed; ops_status.csv has every row)\n";
  if (!not_run.empty()) counts["not run"] = static_cast<int>(not_run.size());
  out << "\n" << rows.size() + not_run.size() << " ops:";
  bool first = true;
  for (const auto& [status, n] : counts) {
    out << (first ? " " : ", ") << n << " " << status;
    first = false;
  }
  out << "; " << duration(seconds) << "\n";
  return out.str();
}

}  // namespace zl::batch
