// JSON: everything the report holds, for CI and for other tools. Ratios are
// rounded to 6 significant digits so the text is stable across libm builds.
#include "json_parts.hpp"
#include "kernels.hpp"
#include "text.hpp"
#include "zlcore/compare_stats.hpp"

namespace zl::compare {
namespace {

json::Value opt(const std::optional<double>& v) {
  return v ? json::Value(text::round_sig(*v)) : json::Value(rapidjson::kNullType);
}

// Profiled runs: the kernels whose time moved, the most first (kernels.cpp).
json::Value kernels_moved_json(const Compared& c, json::Alloc& a) {
  json::Value out(rapidjson::kArrayType);
  for (const KernelMove& m : c.kernels_moved) {
    json::Value k(rapidjson::kObjectType);
    k.AddMember("name", json::str(m.name, a), a);
    k.AddMember("a_us", opt(m.a_us), a);
    k.AddMember("b_us", opt(m.b_us), a);
    k.AddMember("change", json::str(kernel_change(m), a), a);
    out.PushBack(k, a);
  }
  return out;
}

json::Value side_json(const Side& s, json::Alloc& a) {
  json::Value o(rapidjson::kObjectType);
  o.AddMember("path", json::str(s.path, a), a);
  o.AddMember("kind", json::str(s.batch ? "batch" : "run", a), a);
  json::Value runs(rapidjson::kArrayType);
  for (const RunInfo& r : s.runs) {
    json::Value ro(rapidjson::kObjectType);
    ro.AddMember("dir", json::str(r.dir, a), a);
    ro.AddMember("run_id", json::str(r.run_id, a), a);
    ro.AddMember("op", json::str(r.op, a), a);
    ro.AddMember("status", json::str(r.status, a), a);
    ro.AddMember("autotune_mode", json::str(r.autotune_mode, a), a);
    ro.AddMember("rows", static_cast<uint64_t>(r.rows.size()), a);
    runs.PushBack(ro, a);
  }
  o.AddMember("runs", runs, a);
  o.AddMember("warnings", json::str_array(s.warnings, a), a);
  return o;
}

json::Value caliber_json(const Report& r, json::Alloc& a) {
  const Caliber& c = r.caliber;
  json::Value o(rapidjson::kObjectType);
  o.AddMember("same", c.differences.empty(), a);
  o.AddMember("same_except_expected", c.unexpected() == 0, a);
  o.AddMember("summary", json::str(text::caliber_summary(r), a), a);
  o.AddMember("pairs", static_cast<uint64_t>(c.pairs), a);
  o.AddMember("autotune_pairing", json::str(c.autotune_pairing, a), a);
  o.AddMember("autotune_fair", c.autotune_fair, a);
  json::Value diffs(rapidjson::kArrayType);
  for (const Difference& d : c.differences) {
    json::Value dj(rapidjson::kObjectType);
    dj.AddMember("key", json::str(d.key, a), a);
    dj.AddMember("a", json::str(d.a, a), a);
    dj.AddMember("b", json::str(d.b, a), a);
    dj.AddMember("detail", json::str(d.detail, a), a);
    dj.AddMember("ops", json::str_array(d.ops, a), a);
    dj.AddMember("expected", d.expected, a);
    diffs.PushBack(dj, a);
  }
  o.AddMember("differences", diffs, a);
  o.AddMember("notes", json::str_array(c.notes, a), a);
  const std::string w = text::control_warning(r);
  o.AddMember("control_warning", w.empty() ? json::Value(rapidjson::kNullType) : json::str(w, a), a);
  return o;
}

json::Value geomean_json(const Geomean& g, json::Alloc& a) {
  json::Value o(rapidjson::kObjectType);
  o.AddMember("group", json::str(g.group, a), a);
  o.AddMember("rows", static_cast<uint64_t>(g.rows), a);
  // Rows timed call by call with no noise floor, which the geomean leaves out.
  o.AddMember("rows_host_paced", static_cast<uint64_t>(g.host_paced), a);
  o.AddMember("speedup", g.rows == 0 ? json::Value(rapidjson::kNullType) : json::Value(text::round_sig(g.speedup)), a);
  o.AddMember("ci_low", opt(g.lo), a);
  o.AddMember("ci_high", opt(g.hi), a);
  o.AddMember("control", opt(g.control), a);
  return o;
}

json::Value geomeans_json(const std::vector<Geomean>& gs, json::Alloc& a) {
  json::Value arr(rapidjson::kArrayType);
  for (const Geomean& g : gs) arr.PushBack(geomean_json(g, a), a);
  return arr;
}

}  // namespace

json::Value method_json(const Options& o, json::Alloc& a) {
  json::Value m(rapidjson::kObjectType);
  m.AddMember("name", json::str(text::method_name(), a), a);
  m.AddMember("alpha", kAlpha, a);
  m.AddMember("nominal_false_positive_rate", kAlpha, a);
  m.AddMember("threshold", text::round_sig(o.threshold), a);
  m.AddMember("min_samples_per_side", static_cast<uint64_t>(kMinSamples), a);
  m.AddMember("exact_up_to_pooled", static_cast<uint64_t>(stats::kExactMaxPooled), a);
  m.AddMember("interval", json::str("Hodges-Lehmann (Moses) interval of the speedup, inverting the test", a), a);
  m.AddMember("confidence", kConfidence, a);
  m.AddMember("geomean_interval",
              json::str("two-stage percentile bootstrap: rows with replacement, then each drawn row's noise "
                        "(normal, with the variance resampling its test values gives)",
                        a),
              a);
  m.AddMember("bootstrap_replicates", kBootstrapReplicates, a);
  json::Value lines(rapidjson::kArrayType);
  for (const std::string& l : text::method_lines(o)) lines.PushBack(json::str(l, a), a);
  m.AddMember("text", lines, a);
  return m;
}

void write_json(std::ostream& out, const Report& r) {
  rapidjson::Document doc(rapidjson::kObjectType);
  auto& a = doc.GetAllocator();
  // 2: verdicts from the rank test, intervals, bars and the noise floor.
  doc.AddMember("schema", 2, a);
  doc.AddMember("a", side_json(r.a, a), a);
  doc.AddMember("b", side_json(r.b, a), a);
  doc.AddMember("speedup_definition", json::str("A ms / B ms, FlagGems side; > 1: B faster", a), a);
  doc.AddMember("threshold", text::round_sig(r.options.threshold), a);
  doc.AddMember("method", method_json(r.options, a), a);
  json::Value nf(rapidjson::kNullType);
  if (r.options.noise_floor) {
    nf.SetObject();
    nf.AddMember("path", json::str(r.options.noise_floor->path, a), a);
    nf.AddMember("sha256", json::str(r.options.noise_floor->sha256, a), a);
    nf.AddMember("calibration_runs", static_cast<uint64_t>(r.options.noise_floor->calibration_runs), a);
    nf.AddMember("rows_known", static_cast<uint64_t>(r.rows_with_floor), a);
    nf.AddMember("rows_widened", static_cast<uint64_t>(r.rows_widened), a);
  }
  doc.AddMember("noise_floor", nf, a);
  doc.AddMember("rows_on_repeats", static_cast<uint64_t>(r.rows_on_repeats), a);
  doc.AddMember("caliber", caliber_json(r, a), a);

  json::Value rows(rapidjson::kArrayType);
  for (const Compared& c : r.rows) {
    json::Value o(rapidjson::kObjectType);
    o.AddMember("op", json::str(c.op, a), a);
    o.AddMember("dtype", json::str(c.dtype, a), a);
    o.AddMember("shape", json::str(c.shape, a), a);
    o.AddMember("a_ms", opt(c.a_ms), a);
    o.AddMember("b_ms", opt(c.b_ms), a);
    o.AddMember("speedup", opt(c.speedup), a);
    o.AddMember("ci_low", opt(c.ci_lo), a);
    o.AddMember("ci_high", opt(c.ci_hi), a);
    o.AddMember("p_value", opt(c.p_value), a);
    o.AddMember("bar", text::round_sig(c.bar), a);
    o.AddMember("floor", opt(c.floor), a);
    o.AddMember("noise_pct", text::round_sig(c.noise_pct), a);
    o.AddMember("repeats_a", c.repeats_a, a);
    o.AddMember("repeats_b", c.repeats_b, a);
    o.AddMember("samples_a", static_cast<uint64_t>(c.values_a.size()), a);
    o.AddMember("samples_b", static_cast<uint64_t>(c.values_b.size()), a);
    // Only where a run knew its device's peaks: older reports keep their shape.
    if (c.a_pct_bw || c.b_pct_bw || c.a_pct_fp || c.b_pct_fp) {
      json::Value p(rapidjson::kObjectType);
      p.AddMember("bandwidth_a", opt(c.a_pct_bw), a);
      p.AddMember("bandwidth_b", opt(c.b_pct_bw), a);
      p.AddMember("compute_a", opt(c.a_pct_fp), a);
      p.AddMember("compute_b", opt(c.b_pct_fp), a);
      o.AddMember("pct_of_peak", p, a);
    }
    o.AddMember("samples_kind_a", json::str(sample_kind_name(c.kind_a), a), a);
    o.AddMember("samples_kind_b", json::str(sample_kind_name(c.kind_b), a), a);
    o.AddMember("verdict", json::str(verdict_name(c.verdict), a), a);
    o.AddMember("torch_a_ms", opt(c.a_base_ms), a);
    o.AddMember("torch_b_ms", opt(c.b_base_ms), a);
    o.AddMember("torch_ratio", opt(c.control), a);
    o.AddMember("note", json::str(c.note, a), a);
    if (!c.kernels_moved.empty()) o.AddMember("kernels_moved", kernels_moved_json(c, a), a);
    rows.PushBack(o, a);
  }
  doc.AddMember("rows", rows, a);

  json::Value one(rapidjson::kArrayType);
  for (const OneSided& o : r.one_sided) {
    json::Value oj(rapidjson::kObjectType);
    oj.AddMember("side", json::str(o.side, a), a);
    oj.AddMember("op", json::str(o.op, a), a);
    oj.AddMember("dtype", json::str(o.dtype, a), a);
    oj.AddMember("shape", json::str(o.shape, a), a);
    oj.AddMember("ms", opt(o.ms), a);
    one.PushBack(oj, a);
  }
  doc.AddMember("one_sided", one, a);

  json::Value gm(rapidjson::kObjectType);
  gm.AddMember("overall", geomean_json(r.overall, a), a);
  gm.AddMember("by_op", geomeans_json(r.by_op, a), a);
  gm.AddMember("by_dtype", geomeans_json(r.by_dtype, a), a);
  doc.AddMember("geomean", gm, a);

  json::Value counts(rapidjson::kObjectType);
  for (Verdict v : kVerdicts) {
    auto it = r.counts.find(v);
    counts.AddMember(json::str(verdict_name(v), a),
                     json::Value(static_cast<uint64_t>(it == r.counts.end() ? 0 : it->second)), a);
  }
  counts.AddMember("ONE_SIDED", static_cast<uint64_t>(r.one_sided.size()), a);
  doc.AddMember("counts", counts, a);
  doc.AddMember("regression", r.regression(), a);
  out << json::pretty(doc);
}

}  // namespace zl::compare
