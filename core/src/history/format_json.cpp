// The report as JSON (kind zlcore-history-report): runs, op-level steps,
// series steps, notes. Non-finite numbers are written as null.
#include <cmath>

#include "../util/json.hpp"
#include "groups.hpp"

namespace zl::history {
namespace {

using json::Alloc;
using json::str;
using json::Value;

Value changes(const std::vector<Change>& c, Alloc& a) {
  Value arr(rapidjson::kArrayType);
  for (const Change& x : c) {
    Value o(rapidjson::kObjectType);
    o.AddMember("key", str(x.key, a), a);
    o.AddMember("before", str(x.before, a), a);
    o.AddMember("after", str(x.after, a), a);
    arr.PushBack(o, a);
  }
  return arr;
}

Value runs(const Report& r, Alloc& a) {
  Value arr(rapidjson::kArrayType);
  for (size_t i = 0; i < r.runs.size(); ++i) {
    Value o(rapidjson::kObjectType);
    o.AddMember("run", static_cast<uint64_t>(i + 1), a);
    o.AddMember("started", str(r.runs[i].started, a), a);
    o.AddMember("path", str(r.runs[i].path, a), a);
    o.AddMember("pace_pct", (std::exp(r.runs[i].pace) - 1) * 100, a);
    arr.PushBack(o, a);
  }
  return arr;
}

Value groups(const Report& r, Alloc& a) {
  Value arr(rapidjson::kArrayType);
  for (const OpStep& g : op_steps(r)) {
    Value o(rapidjson::kObjectType);
    o.AddMember("op", str(g.op, a), a);
    o.AddMember("side", str(g.side, a), a);
    o.AddMember("kind", str(g.change > 0 ? "regression" : "improvement", a), a);
    o.AddMember("new", g.is_new, a);
    o.AddMember("change_pct", g.change * 100, a);
    o.AddMember("series", static_cast<uint64_t>(g.series), a);
    o.AddMember("last_good_run", static_cast<uint64_t>(g.last_good + 1), a);
    o.AddMember("first_bad_run", static_cast<uint64_t>(g.first_bad + 1), a);
    o.AddMember("changed", changes(g.changed, a), a);
    arr.PushBack(o, a);
  }
  return arr;
}

Value series_steps(const Report& r, Alloc& a) {
  Value arr(rapidjson::kArrayType);
  for (const ReportStep& s : r.steps) {
    Value o(rapidjson::kObjectType);
    o.AddMember("op", str(s.op, a), a);
    o.AddMember("dtype", str(s.dtype, a), a);
    o.AddMember("shape", str(s.shape, a), a);
    o.AddMember("side", str(s.side, a), a);
    o.AddMember("last_good_run", static_cast<uint64_t>(s.step.last_good + 1), a);
    o.AddMember("first_bad_run", static_cast<uint64_t>(s.step.first_bad + 1), a);
    o.AddMember("before_ms", s.step.before_ms, a);
    o.AddMember("after_ms", s.step.after_ms, a);
    o.AddMember("change_pct", s.step.change * 100, a);
    o.AddMember("z", s.step.z, a);
    o.AddMember("new", s.is_new, a);
    o.AddMember("changed", changes(s.changed, a), a);
    arr.PushBack(o, a);
  }
  return arr;
}

}  // namespace

void write_json(std::ostream& out, const Report& r) {
  rapidjson::Document d(rapidjson::kObjectType);
  Alloc& a = d.GetAllocator();
  d.AddMember("kind", "zlcore-history-report", a);
  d.AddMember("schema_version", kSchemaVersion, a);
  d.AddMember("threshold_pct", r.options.threshold * 100, a);
  d.AddMember("alpha", r.options.alpha, a);
  d.AddMember("pace_removed", r.options.pace, a);
  d.AddMember("min_runs", static_cast<uint64_t>(r.options.min_runs), a);
  d.AddMember("series", static_cast<uint64_t>(r.series.size()), a);
  d.AddMember("regressions", static_cast<uint64_t>(r.regressions()), a);
  d.AddMember("new_regressions", static_cast<uint64_t>(r.new_regressions()), a);
  d.AddMember("runs", runs(r, a), a);
  d.AddMember("steps", groups(r, a), a);
  d.AddMember("series_steps", series_steps(r, a), a);
  d.AddMember("notes", json::str_array(r.notes, a), a);
  out << json::pretty(d);
}

}  // namespace zl::history
