// One batch on this host, as the local launcher runs it. Its jobs each have
// a file of their own:
//   batch_run.cpp        the passes (warm-up, timed) and the summary
//   batch_compile.cpp    the compile-ahead pass before them
//   batch_events.cpp     what happens as each op starts and ends: its
//                        directories, log, lease and ops_status.csv row
//   batch_directory.cpp  the batch directory: checked, locked, room kept
//   batch_history.cpp    history and resume: what is left to do, the earlier
//                        invocations and whether this one may add to them
//   batch_orphans.cpp    leftover leases: an earlier batch's runs still alive
//   batch_identity.cpp   batch_identity.json
#pragma once

#include <rapidjson/document.h>
#include <sys/types.h>

#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "../util/dir_lock.hpp"
#include "../util/json.hpp"
#include "../util/space_reserve.hpp"
#include "lease.hpp"
#include "progress.hpp"
#include "scheduler.hpp"
#include "zlcore/batch.hpp"

namespace zl::batch {

class BatchRun : public QueueEvents {
 public:
  BatchRun(const BatchOptions& o, const Backend& b, std::vector<Device> devices);

  // The whole batch; returns its exit code.
  int execute();

  // QueueEvents (batch_events.cpp).
  OpLaunch prepare(const Job& job, const Device& device) override;
  void started(const Job& job, const OpLaunch& l) override;
  void running_as(const Job& job, const OpLaunch& l, pid_t pid) override;
  void finished(const Job& job, const OpLaunch& l, const OpOutcome& out) override;
  void never_ran(const Job& job, Status status, const std::string& reason) override;
  void note(const std::string& line) override;
  void tick(const std::vector<InFlight>& running) override { progress_->tick(running); }
  bool stop_starting() const override { return disk_full_ || !link_found_.empty(); }

 private:
  static constexpr const char* kStatusFile = "ops_status.csv";

  // batch_run.cpp
  ColdExecutorConfig cold_config() const;
  WarmExecutorConfig warm_config(const ColdExecutorConfig& ec) const;
  void start_executor();
  bool run_passes();
  int finish(bool interrupted);
  void print_time_summary(const std::vector<OpRow>& rows) const;
  std::vector<OpRow> latest_rows() const;
  std::string devices_text() const;

  // batch_compile.cpp
  bool compile_ahead(const std::vector<Job>& jobs, QueueConfig qc);
  std::string busy_device(const QueueConfig& qc) const;
  std::unique_ptr<Executor> compile_executor(const std::vector<Device>& lanes) const;
  void compiled(const Job& job, const OpLaunch& l, const OpOutcome& out);
  json::Value compile_report(json::Alloc& a) const;

  // batch_events.cpp
  bool progress_tty() const;
  void warn_once(const std::string& what);
  void say(const std::string& line);
  void log(const std::string& line);
  void record(const OpRow& row);
  void out_of_space(const std::string& what);

  // batch_directory.cpp
  void prepare_directory();

  // batch_history.cpp
  void decide_work();
  void load_history();
  void check_caliber();
  bool has_rows() const;

  // batch_orphans.cpp
  bool settle_orphans();
  bool settle_lease(const std::string& file);
  void adopt(const Lease& lease);

  // batch_identity.cpp
  void write_identity(const std::string& status);
  json::Value status_counts(json::Alloc& a) const;
  json::Value invocations(const std::string& status, json::Alloc& a) const;

  const BatchOptions& o_;
  const Backend& backend_;
  std::vector<Device> devices_;
  std::filesystem::path dir_;
  DirLock lock_;
  double t0_ = 0;
  std::string started_;
  std::unique_ptr<Executor> executor_;
  std::unique_ptr<Progress> progress_;
  std::vector<size_t> todo_;
  std::map<std::string, int> attempts_;
  std::vector<OpRow> earlier_rows_, rows_;
  std::map<size_t, std::string> warmed_on_;
  bool warmup_ = false;
  bool compile_pass_ = false;
  // What the compile-ahead pass did, for the summary and the identity.
  struct CompileAhead {
    int lanes = 0;
    std::string off;  // why no pass ran; empty when one did (or nothing was left to run)
    std::string triton_dir;
    std::vector<std::string> devices;                                        // the lanes' device ids
    size_t ops = 0, compiled = 0, failed = 0, interrupted = 0, already = 0;  // already: an earlier batch's marker
    bool marker_failed = false;
    double seconds = 0;
    std::map<size_t, std::string> keys;  // op index -> its marker's key
  } compile_;
  size_t finished_rows_ = 0;
  std::set<std::string> warned_;
  std::set<std::string> blocked_;          // ops whose earlier run would not die
  std::unique_ptr<SpaceReserve> reserve_;  // room for the last rows when the disk fills up
  bool disk_full_ = false;
  std::string disk_full_what_;
  std::string link_found_;            // a directory link found inside --out while the batch ran
  rapidjson::Document history_;       // batch_identity.json's earlier invocations
  std::string history_gap_;           // why the first invocation's settings are unknown; "" when known
  std::vector<std::string> differs_;  // settings that differ from the first invocation's
};

}  // namespace zl::batch
