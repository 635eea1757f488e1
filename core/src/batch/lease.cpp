#include "lease.hpp"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "../util/clock.hpp"
#include "../util/json.hpp"
#include "../util/json_read.hpp"
#include "../util/proc_stat.hpp"
#include "../util/process_tree.hpp"
#include "zlcore/atomic_file.hpp"
#include "zlcore/process.hpp"

namespace fs = std::filesystem;

namespace zl::batch {
namespace {

std::string read_small(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string boot_id() {
  std::string id = read_small("/proc/sys/kernel/random/boot_id");
  while (!id.empty() && (id.back() == '\n' || id.back() == ' ')) id.pop_back();
  return id;
}

std::string host_name() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return host;
}

bool owned_by_us(pid_t pid) {
  struct stat st {};
  return ::stat(("/proc/" + std::to_string(pid)).c_str(), &st) == 0 && st.st_uid == ::geteuid();
}

// Whether a process works for this batch: a `zlcore run` it started carries
// `--batch-dir <dir>` in its argv, and pytest (and what pytest starts) carries
// ZL_RUN_DIR=<dir>/... in its environment. A lease is a file in a directory
// others may write: it must not be able to aim our SIGKILL at anything else.
bool works_for(pid_t pid, const std::string& batch_dir) {
  if (!owned_by_us(pid)) return false;
  const std::string base = "/proc/" + std::to_string(pid);
  const std::string argv = read_small(base + "/cmdline");
  if (argv.find(std::string("--batch-dir") + '\0' + batch_dir + '\0') != std::string::npos) return true;
  const std::string env = read_small(base + "/environ");
  const std::string want = "ZL_RUN_DIR=" + batch_dir + "/";
  for (size_t at = 0; at < env.size();) {
    const size_t end = env.find('\0', at);
    if (env.compare(at, want.size(), want) == 0) return true;
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return false;
}

}  // namespace

std::string lease_path(const std::string& batch_dir, const std::string& op_dir_name) {
  return (fs::path(batch_dir) / "leases" / (op_dir_name + ".json")).string();
}

bool describe_process(pid_t pid, Lease* lease) {
  const auto st = proc_stat(pid);
  if (!st) return false;
  lease->pid = pid;
  lease->pgid = st->pgid;
  lease->start_ticks = st->start_ticks;
  lease->boot_id = boot_id();
  lease->host = host_name();
  lease->started = utc_now_iso();
  return true;
}

void write_lease(const std::string& path, const Lease& l) {
  rapidjson::Document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  d.AddMember("op", json::str(l.op, a), a);
  d.AddMember("run_dir", json::str(l.run_dir, a), a);
  d.AddMember("batch_dir", json::str(l.batch_dir, a), a);
  d.AddMember("warmup", l.pass != "run", a);
  d.AddMember("pass", json::str(l.pass, a), a);
  d.AddMember("device_index", l.device_index, a);
  d.AddMember("device_id", json::str(l.device_id, a), a);
  d.AddMember("pid", static_cast<int64_t>(l.pid), a);
  d.AddMember("pgid", static_cast<int64_t>(l.pgid), a);
  d.AddMember("start_ticks", static_cast<uint64_t>(l.start_ticks), a);
  d.AddMember("boot_id", json::str(l.boot_id, a), a);
  d.AddMember("host", json::str(l.host, a), a);
  d.AddMember("started", json::str(l.started, a), a);
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  write_file_atomic(path, json::pretty(d));
}

std::optional<Lease> read_lease(const std::string& path, std::string* why) {
  rapidjson::Document d;
  std::string text;
  try {
    text = read_file(path);
  } catch (const std::exception& e) {
    *why = e.what();
    return std::nullopt;
  }
  if (const std::string err = json::parse(d, text); !err.empty()) {
    *why = "not valid JSON (" + err + ")";
    return std::nullopt;
  }
  auto str = [&](const char* k) -> std::optional<std::string> {
    if (!d.IsObject() || !d.HasMember(k) || !d[k].IsString()) return std::nullopt;
    return std::string(d[k].GetString(), d[k].GetStringLength());
  };
  auto num = [&](const char* k) -> std::optional<int64_t> {
    if (!d.IsObject() || !d.HasMember(k) || !d[k].IsInt64()) return std::nullopt;
    return d[k].GetInt64();
  };
  const auto op = str("op"), run_dir = str("run_dir"), batch_dir = str("batch_dir"), boot = str("boot_id"),
             host = str("host");
  const auto pid = num("pid"), pgid = num("pgid");
  // A pid past pid_t's range would wrap to another (4294967297 to 1).
  constexpr int64_t kMaxPid = std::numeric_limits<pid_t>::max();
  if (!op || !run_dir || !batch_dir || !boot || !host || !pid || !pgid || *pid <= 1 || *pgid <= 1 || *pid > kMaxPid ||
      *pgid > kMaxPid || !d.HasMember("start_ticks") || !d["start_ticks"].IsUint64()) {
    *why = "not a lease zlcore writes";
    return std::nullopt;
  }
  Lease l;
  l.op = *op;
  l.run_dir = *run_dir;
  l.batch_dir = *batch_dir;
  l.boot_id = *boot;
  l.host = *host;
  l.pid = static_cast<pid_t>(*pid);
  l.pgid = static_cast<pid_t>(*pgid);
  l.start_ticks = d["start_ticks"].GetUint64();
  const bool not_a_run = d.HasMember("warmup") && d["warmup"].IsBool() && d["warmup"].GetBool();
  // Adopted as a row only when it says it is a run: a pass this zlcore
  // does not know, or an older lease's "warmup", never is.
  const std::optional<std::string> pass = str("pass");
  if (pass && (*pass == "run" || *pass == "warm-up" || *pass == "compile")) {
    l.pass = *pass;
  } else if (pass || not_a_run) {
    l.pass = "warm-up";
  }
  if (auto v = num("device_index"); v && *v >= 0 && *v <= std::numeric_limits<int>::max()) {
    l.device_index = static_cast<int>(*v);
  }
  l.device_id = str("device_id").value_or("");
  l.started = str("started").value_or("");
  return l;
}

std::string lease_words(const Lease& lease) {
  if (lease.pass == "compile") return "its compile-ahead run";
  if (lease.pass == "warm-up") return "its warm-up";
  return "its run";
}

std::vector<std::string> lease_files(const std::string& batch_dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(fs::path(batch_dir) / "leases", ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() == ".json" && it->is_regular_file()) out.push_back(it->path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool lease_names_dir(const Lease& l, const std::string& own_dir) {
  if (l.batch_dir.empty() || !fs::path(l.batch_dir).is_absolute()) return false;
  std::error_code ec_mine, ec_theirs;
  const fs::path mine = fs::weakly_canonical(own_dir, ec_mine);
  const fs::path theirs = fs::weakly_canonical(l.batch_dir, ec_theirs);
  if (ec_mine || ec_theirs) return false;
  const fs::path rel = theirs.lexically_relative(mine);
  return !rel.empty() && *rel.begin() != "..";
}

std::string foreign_lease_line(const std::string& lease_file, const Lease& l) {
  return "ignoring " + fs::path(lease_file).filename().string() + " in leases/: it names another directory (" +
         l.batch_dir + "), whose processes (pid " + std::to_string(l.pid) +
         ") are not this one's to wait for or kill; left alone";
}

std::vector<pid_t> live_processes(const Lease& l) {
  // Another boot: every process of that one is gone. Another host (a batch
  // directory on a shared file system): nothing here can tell.
  if (l.boot_id != boot_id() || l.host != host_name()) return {};
  std::vector<pid_t> out;
  for (pid_t pid : proc_pids()) {
    const auto st = proc_stat(pid);
    if (!st || st->zombie || st->pgid != l.pgid) continue;
    // The group's leader must be the very process the lease names: a leader
    // with another start time means the id was reused for a new group.
    if (pid == l.pgid && st->start_ticks != l.start_ticks) return {};
    // The same for the run itself where it does not lead the group.
    if (pid == l.pid && st->start_ticks != l.start_ticks) return {};
    if (works_for(pid, l.batch_dir)) out.push_back(pid);
  }
  return out;
}

void kill_processes(const Lease& l, const std::vector<pid_t>& pids) {
  for (pid_t p : pids) {
    // The leader is ours: so are its group and what it started outside it
    // (a preflight tool in a group of its own).
    if (p == l.pgid) kill_tree(p);
    ::kill(p, SIGKILL);
  }
}

std::vector<pid_t> kill_and_wait(const Lease& l, const std::vector<pid_t>& pids) {
  kill_processes(l, pids);
  const double until = monotonic_seconds() + 10;
  std::vector<pid_t> alive;
  while (!(alive = live_processes(l)).empty() && monotonic_seconds() < until) usleep(50000);
  return alive;
}

}  // namespace zl::batch
