#include "worker_client.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>

#include "../util/json.hpp"
#include "../util/json_read.hpp"
#include "../util/process_tree.hpp"
#include "zlcore/signals.hpp"

namespace zl {
namespace {

// One '\n'-terminated line, or "" on EOF / deadline (deadline 0: none).
bool read_line(int fd, std::string& buffer, std::string* line, double deadline, const std::function<bool()>& tick) {
  while (true) {
    size_t nl = buffer.find('\n');
    if (nl != std::string::npos) {
      *line = buffer.substr(0, nl);
      buffer.erase(0, nl + 1);
      return true;
    }
    pollfd p{fd, POLLIN, 0};
    int r = ::poll(&p, 1, 100);
    if (r > 0) {
      char buf[4096];
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n > 0) {
        buffer.append(buf, static_cast<size_t>(n));
        continue;
      }
      if (n == 0 || (errno != EINTR && errno != EAGAIN)) return false;
    }
    if (deadline > 0 && monotonic_seconds() > deadline) return false;
    if (tick && !tick()) return false;
  }
}

bool send_all(int fd, const std::string& text) {
  size_t off = 0;
  while (off < text.size()) {
    ssize_t n = ::send(fd, text.data() + off, text.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

WorkerSession::~WorkerSession() {
  if (fd_ >= 0) ::close(fd_);
}

bool WorkerSession::connect(const std::string& socket_path, double handshake_timeout_s, std::string* error) {
  socket_path_ = socket_path;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof addr.sun_path) {
    *error = "socket path too long: " + socket_path;
    return false;
  }
  std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size() + 1);
  // The executor starts the worker just before this run; give it time to bind.
  const double bind_deadline = monotonic_seconds() + 30;
  while (true) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) {
      *error = std::string("socket: ") + std::strerror(errno);
      return false;
    }
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) break;
    const int e = errno;
    ::close(fd_);
    fd_ = -1;
    if ((e != ENOENT && e != ECONNREFUSED) || monotonic_seconds() > bind_deadline) {
      *error = "cannot connect to " + socket_path + ": " + std::strerror(e);
      return false;
    }
    // The executor reaps the worker and leaves how it ended beside the
    // socket: a worker that died before it bound (a --python that is not
    // python) must not cost the op the whole wait.
    std::ifstream ended(socket_path + ".exit");
    std::string how;
    if (std::getline(ended, how) && !how.empty()) {
      *error = "the worker ended (" + how + ") before it was ready";
      return false;
    }
    usleep(20000);
  }
  std::string line;
  const double deadline = handshake_timeout_s > 0 ? monotonic_seconds() + handshake_timeout_s : 0;
  if (!read_line(fd_, pending_, &line, deadline, [] { return signals::interrupt_count() == 0; })) {
    *error = "the worker closed the connection before it was ready";
    return false;
  }
  rapidjson::Document d;
  if (!json::parse(d, line).empty() || !d.IsObject() || !d.HasMember("pid") || !d["pid"].IsInt()) {
    *error = "bad handshake from the worker: " + line.substr(0, 200);
    return false;
  }
  pid_ = d["pid"].GetInt();
  if (d.HasMember("ops_before") && d["ops_before"].IsInt()) ops_before_ = d["ops_before"].GetInt();
  standby_ = d.HasMember("standby") && d["standby"].IsBool() && d["standby"].GetBool();
  compile_only_ = d.HasMember("compile_only") && d["compile_only"].IsBool() && d["compile_only"].GetBool();
  return true;
}

std::pair<bool, int> WorkerSession::how_it_ended() {
  // The executor reaps the worker (its parent) and leaves the wait status
  // beside the socket; wait a little for it to notice.
  const double deadline = monotonic_seconds() + 5;
  while (monotonic_seconds() < deadline) {
    std::ifstream in(socket_path_ + ".exit");
    std::string kind;
    int value = 0;
    if (in >> kind >> value) return {kind == "signal", value};
    usleep(20000);
  }
  return {true, SIGKILL};  // unknown: it vanished without a status we could read
}

ChildResult WorkerSession::run(const std::vector<std::string>& args, const std::map<std::string, std::string>& env_set,
                               const std::string& cwd, const std::string& log_path, double timeout_s) {
  ChildResult r;
  const double started = monotonic_seconds();
  // The exact environment a cold child gets: ours with env_set on top.
  std::map<std::string, std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (eq != nullptr) env[std::string(*e, static_cast<size_t>(eq - *e))] = eq + 1;
  }
  for (const auto& [k, v] : env_set) env[k] = v;

  rapidjson::Document req(rapidjson::kObjectType);
  auto& a = req.GetAllocator();
  req.AddMember("args", json::str_array(args, a), a);
  req.AddMember("env", json::str_map(env, a), a);
  req.AddMember("cwd", json::str(cwd, a), a);
  req.AddMember("log", json::str(log_path, a), a);
  if (!send_all(fd_, json::compact(req) + "\n")) {
    r.spawn_error = "could not send the op to the worker: " + std::string(std::strerror(errno));
    return r;
  }
  r.started = true;

  const int seen = signals::interrupt_count();
  double kill_at = 0;
  bool killed = false;  // once: each kill_tree walks /proc
  auto tick = [&]() -> bool {
    const double now = monotonic_seconds();
    if (timeout_s > 0 && now - started > timeout_s && !r.timed_out) {
      // The worker is ours for this op only: killing it costs nothing else.
      r.timed_out = true;
      if (!killed) kill_tree(pid_);
      killed = true;
    }
    if (signals::interrupt_count() != seen && !r.interrupted) {
      r.interrupted = true;
      ::kill(pid_, SIGINT);  // pytest prints its summary and returns
      kill_at = now + 5;
    }
    if (r.interrupted && !killed && (now > kill_at || signals::interrupt_count() > seen + 1)) {
      kill_tree(pid_);
      killed = true;
    }
    return true;
  };
  std::string line;
  const bool replied = read_line(fd_, pending_, &line, 0, tick);
  r.seconds = monotonic_seconds() - started;
  rapidjson::Document d;
  const bool parsed = replied && json::parse(d, line).empty();
  if (parsed && d.IsObject() && d.HasMember("exit_code") && d["exit_code"].IsInt()) {
    r.exit_code = d["exit_code"].GetInt();
    auto health = d.FindMember("health");
    if (health != d.MemberEnd() && health->value.IsObject()) {
      auto ok = health->value.FindMember("ok");
      auto why = health->value.FindMember("why");
      healthy_ = !(ok != health->value.MemberEnd() && ok->value.IsBool() && !ok->value.GetBool());
      if (why != health->value.MemberEnd() && why->value.IsString()) health_reason_ = why->value.GetString();
      auto memory = health->value.FindMember("memory");
      if (memory != health->value.MemberEnd() && memory->value.IsObject()) {
        auto bytes = [&](const char* name, int64_t* out) {
          auto it = memory->value.FindMember(name);
          if (it != memory->value.MemberEnd() && it->value.IsInt64() && it->value.GetInt64() >= 0) {
            *out = it->value.GetInt64();
          }
        };
        bytes("baseline_allocated_bytes", &memory_.baseline_allocated);
        bytes("allocated_bytes", &memory_.allocated);
        bytes("reserved_bytes", &memory_.reserved);
      }
    }
    return r;
  }
  // No reply: the worker died (or was killed above) with the op in flight.
  if (r.timed_out || r.interrupted) return r;
  const auto [signalled, value] = how_it_ended();
  if (signalled) {
    r.term_signal = value;
  } else {
    // pytest's own exit is a reply; the worker exiting instead (os._exit in
    // the suite) says nothing of the op, so a fresh process runs it again.
    r.exit_code = value;
    healthy_ = false;
    health_reason_ = "it exited (status " + std::to_string(value) + ") with the op in flight, without a reply";
  }
  return r;
}

}  // namespace zl
