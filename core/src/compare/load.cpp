// Reading one side: a run directory, or a batch directory of runs/<op>/ run
// directories. Results are appended line by line by the pytest child, so a
// crash may leave a torn last line: such lines are skipped with a warning
// rather than failing the whole comparison.
#include <rapidjson/document.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "../util/file_kind.hpp"
#include "../util/json_read.hpp"
#include "../util/printable.hpp"
#include "kernels.hpp"
#include "provenance.hpp"
#include "zlcore/compare.hpp"
#include "zlcore/errors.hpp"
#include "zlcore/identity_schema.hpp"
#include "zlcore/ops_status.hpp"

namespace fs = std::filesystem;

namespace zl::compare {
namespace {

// "" for a file that is not there (the caller says what is missing); a
// FIFO, a device, a directory or a file past the bound is refused in one
// line: reading one must neither block nor run without end.
std::string read_text(const fs::path& p) {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(p, ec))) return "";
  try {
    return read_regular_file(p.string());
  } catch (const std::exception& e) {
    throw UsageError(std::string("compare: ") + e.what());
  }
}

std::string scalar_text(const rapidjson::Value& v);

// Numbers as a person would write them: integers without a decimal point.
std::string number_text(const rapidjson::Value& v) {
  if (v.IsInt64()) return std::to_string(v.GetInt64());
  if (v.IsUint64()) return std::to_string(v.GetUint64());
  std::ostringstream s;
  s.precision(15);
  s << v.GetDouble();
  return s.str();
}

std::string scalar_text(const rapidjson::Value& v) {
  if (v.IsString()) return std::string(v.GetString(), v.GetStringLength());
  if (v.IsBool()) return v.GetBool() ? "true" : "false";
  if (v.IsNumber()) return number_text(v);
  if (v.IsNull()) return "";
  if (v.IsArray()) {
    // Lists such as fallback_shapes compare as sets: order is incidental.
    std::vector<std::string> items;
    for (const auto& e : v.GetArray()) items.push_back(scalar_text(e));
    std::sort(items.begin(), items.end());
    std::string out;
    for (const std::string& s : items) out += (out.empty() ? "" : "; ") + s;
    return out;
  }
  std::string out = "{";
  for (const auto& m : v.GetObject()) {
    out += (out.size() > 1 ? ", " : "") + std::string(m.name.GetString()) + ": " + scalar_text(m.value);
  }
  return out + "}";
}

// Escaped once, here, for every report: a record's text (an op name, an
// error) holding ESC, a newline or a NUL must reach neither the terminal nor
// a CSV, Markdown or HTML page raw. Both sides are escaped alike, so what
// matches still matches.
std::string text_at(const rapidjson::Value& root, const std::string& dotted) {
  const rapidjson::Value* v = json::at_path(root, dotted);
  return v == nullptr ? "" : printable(scalar_text(*v));
}

std::optional<double> number_at(const rapidjson::Value& o, const char* key) {
  auto it = o.FindMember(key);
  if (it == o.MemberEnd() || !it->value.IsNumber()) return std::nullopt;
  return it->value.GetDouble();
}

// A list of per-placement or per-repeat times. Only positive finite numbers
// can enter a ratio; anything else is counted so the row can say so.
std::vector<double> times_at(const rapidjson::Value& o, const char* key, size_t& unusable) {
  std::vector<double> out;
  auto it = o.FindMember(key);
  if (it == o.MemberEnd() || !it->value.IsArray()) return out;
  for (const auto& v : it->value.GetArray()) {
    if (v.IsNumber() && std::isfinite(v.GetDouble()) && v.GetDouble() > 0) {
      out.push_back(v.GetDouble());
    } else {
      ++unusable;
    }
  }
  return out;
}

ResultRow parse_row(const rapidjson::Value& o) {
  ResultRow r;
  r.op = text_at(o, "op");
  r.dtype = text_at(o, "dtype");
  // `shape` is json.dumps(shape_detail); rebuild it only for rows that lack it.
  r.shape = text_at(o, "shape");
  r.latency_ms = number_at(o, "latency_ms");
  r.latency_base_ms = number_at(o, "latency_base_ms");
  // Converting a double outside int's range is undefined: such a count is no count.
  if (auto n = number_at(o, "repeats"); n && *n >= 0 && *n <= std::numeric_limits<int>::max()) {
    r.repeats = static_cast<int>(*n);
  }
  r.spread_pct = number_at(o, "spread_pct").value_or(0);
  r.spread_base_pct = number_at(o, "spread_base_pct").value_or(0);
  r.timer = text_at(o, "timer");
  r.timer_base = text_at(o, "timer_base");
  if (const std::string l2 = text_at(o, "l2"); !l2.empty()) r.l2 = l2;
  // The direct timer with a fallback reason: the graph capture of this
  // shape's FlagGems side failed and its calls were timed one by one.
  r.timed_call_by_call = r.timer == "direct" && !text_at(o, "fallback_reason").empty();
  r.error = text_at(o, "error");
  r.pct_peak_bandwidth = number_at(o, "pct_peak_bandwidth");
  r.pct_peak_compute = number_at(o, "pct_peak_compute");
  // null when the pace held, else why the sustained procedure ran.
  if (auto it = o.FindMember("sustained"); it != o.MemberEnd() && it->value.IsString()) {
    r.sustained = it->value.GetStringLength() > 0;
  }
  size_t bad_placements = 0, bad_samples = 0;
  r.placements_ms = times_at(o, "placements_ms", bad_placements);
  r.samples_ms = times_at(o, "samples_ms", bad_samples);
  // Count what was dropped from the list the test reads (placements, when the row has any).
  r.unusable_samples = !r.placements_ms.empty() || bad_placements > 0 ? bad_placements : bad_samples;
  r.kernels = kernels_at(o);
  return r;
}

void load_rows(const fs::path& file, const std::string& shown, RunInfo& run, std::vector<std::string>& warnings) {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(file, ec))) {
    // A run the suite declined, or that found no test, measured nothing by
    // design; only a run that says it measured is missing something.
    if (run.status != "unsupported" && run.status != "no_tests" && run.status != "skipped")
      warnings.push_back(shown + ": no results.jsonl");
    return;
  }
  std::istringstream in(read_text(file));
  std::map<std::tuple<std::string, std::string, std::string>, int> seen;
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    rapidjson::Document d;
    if (!json::parse(d, line).empty() || !d.IsObject()) {
      warnings.push_back(shown + ":" + std::to_string(lineno) + ": unreadable line skipped");
      continue;
    }
    ResultRow r = parse_row(d);
    // The same (op, dtype, shape) more than once is genuine: FlagGems' GEMM
    // core shapes are (B, M, N, K) and mm drops B, so two rows report one
    // shape. Both sides run the same shape list in order (the caliber check
    // compares its hash), so the k-th occurrence meets the k-th.
    const int occurrence = ++seen[{r.op, r.dtype, r.shape}];
    if (occurrence > 1) r.shape += " #" + std::to_string(occurrence);
    run.rows.push_back(std::move(r));
  }
}

namespace key = identity::key;

RunInfo load_run(const fs::path& dir, const std::string& shown, std::vector<std::string>& warnings) {
  const fs::path id_file = dir / "run_identity.json";
  rapidjson::Document id;
  const std::string text = read_text(id_file);
  const std::string why = json::parse(id, text);
  if (!why.empty()) throw UsageError("compare: " + shown + "/run_identity.json is not valid JSON: " + why);
  if (!id.IsObject()) throw UsageError("compare: " + shown + "/run_identity.json is not a JSON object");
  RunInfo run;
  run.dir = shown;
  run.run_id = text_at(id, key::run_id);
  run.op = text_at(id, key::op);
  if (run.op.empty()) run.op = dir.filename().string();
  run.status = text_at(id, key::status);
  run.started = text_at(id, key::started);
  for (const std::string& key : caliber_keys()) run.caliber[key] = text_at(id, key);
  // Older identities carry the version only at the top level.
  if (run.caliber[key::versions_zlcore].empty()) run.caliber[key::versions_zlcore] = text_at(id, key::zlcore_version);
  // Identities older than the L2 policy: every timer then ran warm (nothing
  // cleared a cache), so they compare with a warm run as alike.
  if (run.caliber[key::timer_l2].empty()) run.caliber[key::timer_l2] = "warm";
  if (const rapidjson::Value* env = json::at_path(id, key::env); env != nullptr && env->IsObject()) {
    for (const auto& m : env->GetObject()) run.env[printable(m.name.GetString())] = printable(scalar_text(m.value));
  }
  run.autotune_mode = text_at(id, key::autotune_mode);
  run.autotune_source = text_at(id, key::autotune_source_run_id);
  run.autotune_records_hash = text_at(id, key::autotune_records_hash);
  run.autotune_winners_hash = text_at(id, key::autotune_winners_hash);
  if (const rapidjson::Value* w = json::at_path(id, key::autotune_winners); w != nullptr && w->IsObject()) {
    for (const auto& m : w->GetObject()) run.autotune_winners[m.name.GetString()] = text_at(m.value, "sha256");
  }
  if (const rapidjson::Value* fb = json::at_path(id, key::timer_fallback_shapes); fb != nullptr && fb->IsArray()) {
    for (const auto& e : fb->GetArray()) {
      // Older identities list bare shapes.
      if (!e.IsObject()) {
        run.fallback_shapes.insert({"", scalar_text(e), "", ""});
        continue;
      }
      run.fallback_shapes.insert(
          {text_at(e, "dtype"), text_at(e, "shape"), text_at(e, "side"), normalized_reason(text_at(e, "reason"))});
    }
  }
  run.reason = text_at(id, key::reason);
  run.provenance = provenance::read(id);
  load_rows(dir / "results.jsonl", shown + "/results.jsonl", run, warnings);
  return run;
}

// An earlier attempt (runs/<op>.attemptN) or a warm attempt that was rerun
// (runs/<op>.warm) is history, not the op's result.
bool stale_attempt(const std::string& name) {
  if (name.size() > 5 && name.compare(name.size() - 5, 5, ".warm") == 0) return true;
  const size_t at = name.rfind(".attempt");
  return at != std::string::npos && at + 8 < name.size() &&
         name.find_first_not_of("0123456789", at + 8) == std::string::npos;
}

// The run directories of a batch that hold its ops' results now: the
// run_dir of each op's last row in ops_status.csv. Without a readable CSV
// (a batch killed before its first row), runs/<op> minus stale attempts.
std::vector<fs::path> current_runs(const fs::path& root, const std::string& shown, std::vector<std::string>& warnings) {
  std::vector<fs::path> dirs;
  std::optional<std::map<std::string, std::string>> current;
  if (fs::is_regular_file(root / "ops_status.csv"))
    current = batch::current_run_dirs(read_text(root / "ops_status.csv"));
  if (current) {
    for (const auto& [op, rel] : *current) {
      const fs::path dir = fs::path(rel).lexically_normal();
      if (rel.empty()) continue;  // never started
      if (dir.is_absolute() || (!dir.empty() && *dir.begin() == "..")) {
        warnings.push_back(shown + "/ops_status.csv: op " + op + ": run_dir " + rel + " is outside the batch; skipped");
        continue;
      }
      if (fs::is_regular_file(root / dir / "run_identity.json")) {
        dirs.push_back(root / dir);
      } else if (fs::exists(root / dir)) {
        // A run that failed preflight has no directory; one that exists
        // without its identity was damaged or cut short before it started.
        warnings.push_back(shown + "/" + dir.generic_string() + ": no run_identity.json; op " + op +
                           "'s rows are left out");
      }
    }
  } else if (fs::is_directory(root / "runs")) {
    for (const auto& e : fs::directory_iterator(root / "runs")) {
      if (e.is_directory() && !stale_attempt(e.path().filename().string()) &&
          fs::is_regular_file(e.path() / "run_identity.json")) {
        dirs.push_back(e.path());
      }
    }
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

}  // namespace

Side load_side(const std::string& label, const std::string& given) {
  // "batch/" and "batch" are one directory and should read the same in the output.
  std::string path = given;
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  Side side;
  side.label = label;
  side.path = path;
  const fs::path root(path);
  if (fs::is_regular_file(root / "run_identity.json")) {
    side.runs.push_back(load_run(root, path, side.warnings));
    return side;
  }
  const bool has_runs = fs::is_directory(root / "runs");
  if (!fs::is_regular_file(root / "ops_status.csv") && !has_runs) {
    throw UsageError("compare: " + path +
                     " is neither a run directory (run_identity.json) nor a batch directory "
                     "(ops_status.csv, runs/<op>/)");
  }
  side.batch = true;
  for (const fs::path& d : current_runs(root, path, side.warnings)) {
    side.runs.push_back(load_run(d, path + "/" + d.lexically_relative(root).generic_string(), side.warnings));
  }
  if (side.runs.empty()) side.warnings.push_back(path + ": batch directory holds no run directories yet");
  return side;
}

}  // namespace zl::compare
