// What a pytest child leaves for zlcore to decide a run's status: the
// outcomes plugin's report (.child/outcomes.json), the rows of results.jsonl
// and the end of pytest.log, with the child's exit. A child that crashed
// half-way, or a suite that prints anything, writes any of them.
//
// Input: a first byte choosing the exit (its code, or a signal, a timeout,
// an interrupt), then the three texts separated by a line "--".
#include <rapidjson/document.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_util.hpp"
#include "run/status.hpp"
#include "util/json_read.hpp"
#include "zlcore/provider.hpp"

namespace {

std::string next_part(const std::string& in, size_t& at) {
  const size_t end = in.find("\n--\n", at);
  std::string part = in.substr(at, end == std::string::npos ? std::string::npos : end - at);
  at = end == std::string::npos ? in.size() : end + 4;
  return part;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  zl::ChildFacts facts;
  const uint8_t how = data[0];
  facts.child.started = (how & 0x80) == 0;
  facts.child.exit_code = how & 0x0f;
  if (how & 0x10) facts.child.term_signal = 9;
  facts.child.timed_out = (how & 0x20) != 0;
  facts.child.interrupted = (how & 0x40) != 0;
  const std::string in = zl_fuzz::text(data + 1, size - 1);
  size_t at = 0;
  const std::string outcomes = next_part(in, at);
  const std::string results = next_part(in, at);
  facts.log_tail = next_part(in, at);

  const zl_fuzz::fs::path rows = zl_fuzz::scratch() / "results.jsonl";
  zl_fuzz::put(rows, results);
  facts.rows = zl::count_rows(rows.string());
  rapidjson::Document d;
  // As the run reads a child's report: half the readers' depth limit.
  if (zl::json::parse(d, outcomes, zl::json::kMaxDepth / 2).empty()) facts.outcomes = &d;
  const zl::RunStatus status = zl::decide_status(facts, zl::FlagGemsProvider::is_decline);
  // Every status is one of the documented words with a one-line reason.
  if (status.status.empty() || status.reason.find('\n') != std::string::npos) __builtin_trap();
  return 0;
}
