// The calibration report as JSON, which is also the noise-floor file that
// `compare --noise-floor F` reads (kind and version first, so a reader can
// refuse what it does not know). Nothing in it depends on the clock or the
// machine: the same runs give the same file and the same hash.
#include <cmath>

#include "json_parts.hpp"
#include "text.hpp"
#include "zlcore/compare_calibrate.hpp"

namespace zl::compare {
namespace {

json::Value rate_json(const CalibrationRate& r, json::Alloc& a) {
  json::Value o(rapidjson::kObjectType);
  o.AddMember("group", json::str(r.group, a), a);
  o.AddMember("tested", static_cast<uint64_t>(r.tested), a);
  o.AddMember("false_verdicts", static_cast<uint64_t>(r.false_verdicts), a);
  o.AddMember("false_verdict_rate", text::round_sig(r.rate()), a);
  o.AddMember("noisy", static_cast<uint64_t>(r.noisy), a);
  o.AddMember("noisy_rate", text::round_sig(r.noisy_rate()), a);
  o.AddMember("untested", static_cast<uint64_t>(r.untested), a);
  return o;
}

json::Value counts_json(const std::map<Verdict, size_t>& counts, json::Alloc& a) {
  json::Value o(rapidjson::kObjectType);
  for (Verdict v : kVerdicts) {
    auto it = counts.find(v);
    o.AddMember(json::str(verdict_name(v), a), json::Value(static_cast<uint64_t>(it == counts.end() ? 0 : it->second)),
                a);
  }
  return o;
}

}  // namespace

void write_calibration_json(std::ostream& out, const Calibration& c) {
  rapidjson::Document doc(rapidjson::kObjectType);
  auto& a = doc.GetAllocator();
  doc.AddMember("kind", json::str(kNoiseFloorKind, a), a);
  doc.AddMember("version", kNoiseFloorVersion, a);
  doc.AddMember("threshold", text::round_sig(c.options.threshold), a);
  doc.AddMember("method", method_json(c.options, a), a);
  json::Value applied(rapidjson::kNullType);
  if (c.options.noise_floor) {
    applied.SetObject();
    applied.AddMember("path", json::str(c.options.noise_floor->path, a), a);
    applied.AddMember("sha256", json::str(c.options.noise_floor->sha256, a), a);
  }
  doc.AddMember("noise_floor_applied", applied, a);

  json::Value runs(rapidjson::kArrayType);
  for (const Side& s : c.sides) {
    json::Value o(rapidjson::kObjectType);
    o.AddMember("label", json::str(s.label, a), a);
    o.AddMember("path", json::str(s.path, a), a);
    o.AddMember("kind", json::str(s.batch ? "batch" : "run", a), a);
    std::vector<std::string> ids;
    for (const RunInfo& r : s.runs) ids.push_back(r.run_id);
    o.AddMember("run_ids", json::str_array(ids, a), a);
    runs.PushBack(o, a);
  }
  doc.AddMember("runs", runs, a);

  json::Value pairs(rapidjson::kArrayType);
  for (const CalibrationPair& p : c.pairs) {
    json::Value o(rapidjson::kObjectType);
    o.AddMember("a", json::str(c.sides[p.a].label, a), a);
    o.AddMember("b", json::str(c.sides[p.b].label, a), a);
    o.AddMember("counts", counts_json(p.counts, a), a);
    o.AddMember("caliber", json::str(p.caliber, a), a);
    o.AddMember("caliber_unexpected", static_cast<uint64_t>(p.caliber_unexpected), a);
    pairs.PushBack(o, a);
  }
  doc.AddMember("pairs", pairs, a);
  doc.AddMember("false_verdicts", rate_json(c.overall, a), a);
  json::Value by_op(rapidjson::kArrayType);
  for (const CalibrationRate& r : c.by_op) by_op.PushBack(rate_json(r, a), a);
  doc.AddMember("by_op", by_op, a);
  doc.AddMember("rows_on_repeats", static_cast<uint64_t>(c.rows_on_repeats), a);
  doc.AddMember("notes", json::str_array(c.notes, a), a);

  json::Value rows(rapidjson::kArrayType);
  for (const CalibrationRow& r : c.rows) {
    json::Value o(rapidjson::kObjectType);
    o.AddMember("op", json::str(r.op, a), a);
    o.AddMember("dtype", json::str(r.dtype, a), a);
    o.AddMember("shape", json::str(r.shape, a), a);
    o.AddMember("runs", r.runs, a);
    o.AddMember("mean_ms", text::round_sig(r.mean_ms), a);
    o.AddMember("max_log_ratio", text::round_sig(r.max_log_ratio), a);
    o.AddMember("floor_pct", text::round_sig(std::expm1(r.max_log_ratio) * 100), a);
    o.AddMember("spread_pct", text::round_sig(r.spread_pct), a);
    o.AddMember("factor", text::round_sig(r.factor), a);
    o.AddMember("bar_pct", text::round_sig(r.bar * 100), a);
    o.AddMember("tested", static_cast<uint64_t>(r.tested), a);
    o.AddMember("false_verdicts", static_cast<uint64_t>(r.false_verdicts), a);
    rows.PushBack(o, a);
  }
  doc.AddMember("rows", rows, a);
  out << json::pretty(doc);
}

}  // namespace zl::compare
