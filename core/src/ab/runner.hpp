// The A/B's runner (run_ab): the rounds of an A/B over the devices. Its jobs
// each have a file of their own:
//   runner.cpp            the whole A/B: plan, caliber check, the loop, the report
//   runner_directory.cpp  the A/B directory: created or resumed, locked,
//                         ab_identity.json, a full disk
//   runner_units.cpp      one (op, round) unit: its sides' runs one after the
//                         other, their leases and rounds.csv lines, and
//                         whether the round is whole, runs again or is given up
#pragma once

#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "../util/dir_lock.hpp"
#include "../util/space_reserve.hpp"
#include "zlcore/ab.hpp"

namespace zl::ab {

// passed and partial measured rows; anything else is a round to run again
// (unsupported is final and not a failure).
inline bool measured(batch::Status s) { return s == batch::Status::passed || s == batch::Status::partial; }

class Runner {
 public:
  explicit Runner(const Options& o) : o_(o), dir_(std::filesystem::absolute(o.out_dir).lexically_normal()) {}

  // The whole A/B; returns its exit code.
  int execute();

 private:
  struct Unit {
    size_t op = 0;
    int round = 0;  // 0: side A's record run
    int failures = 0;
  };

  struct Slot {
    Device device;
    bool busy = false;
    Unit unit;
    int attempt = 1;
    std::string rel;  // runs/<op>/r<round>-t<attempt>
    std::vector<std::string> order;
    size_t step = 0;
    std::vector<std::pair<std::string, batch::OpOutcome>> outcomes;
    std::unique_ptr<batch::Execution> exec;
  };

  // runner.cpp
  std::string devices_text() const;
  void plan_units();
  bool needs_record() const { return o_.winners == Winners::record; }
  std::string first_done_round() const;
  bool check_caliber_of(const std::string& rel);
  int refuse();
  int run_loop();

  // runner_directory.cpp
  void prepare();
  void lock();
  void write_identity(const std::string& status);
  void out_of_space(const std::string& what);
  int stop_on_full_disk(const std::string& state, const std::string& resume_does);

  // runner_units.cpp
  bool startable(const Unit& u, const std::vector<Slot>& slots) const;
  void start_unit(Slot& s, const Unit& u);
  void start_step(Slot& s);
  std::string run_name(const Slot& s, const std::string& label) const;
  void lease(const Slot& s, const std::string& label);
  std::string record_source(const std::string& op) const;
  void append(const RoundLine& l);
  void finish_step(Slot& s, const batch::OpOutcome& given);
  void finish_unit(Slot& s);

  Options o_;
  std::filesystem::path dir_;
  std::string started_;
  std::string caliber_note_;
  std::map<std::string, std::unique_ptr<batch::Executor>> executors_;
  std::vector<RoundLine> lines_;
  std::deque<Unit> todo_;
  std::set<std::string> given_up_;
  std::set<std::pair<std::string, std::string>> measured_;  // (op, side) that measured: a skip there passes
  std::map<std::string, std::string> record_dir_;           // op -> runs/<op>/r0-tN
  bool caliber_checked_ = false;
  bool interrupted_ = false;
  bool refused_ = false;
  DirLock lock_;
  std::unique_ptr<SpaceReserve> reserve_;
  bool disk_full_ = false;
  std::string disk_full_what_;
};

}  // namespace zl::ab
