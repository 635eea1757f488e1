// The provenance block says only what the runs recorded: one value where a
// side's runs agree, each value with its count where they do not, the runs
// that recorded nothing counted, and "unknown" where none did.
#include "../../core/src/compare/provenance.hpp"

#include <gtest/gtest.h>

#include "../../core/src/util/json_read.hpp"

namespace {

using zl::compare::Report;
using zl::compare::RunInfo;

RunInfo run(const std::string& identity) {
  rapidjson::Document d;
  EXPECT_EQ(zl::json::parse(d, identity), "");
  RunInfo r;
  r.provenance = zl::compare::provenance::read(d);
  return r;
}

std::string line(const std::vector<zl::compare::provenance::Line>& lines, const std::string& what, bool side_b) {
  for (const auto& l : lines) {
    if (l.what == what) return side_b ? l.b : l.a;
  }
  return "(no line " + what + ")";
}

TEST(Provenance, SaysUnknownWhereNoRunRecordedAFactAndNeverGuesses) {
  Report r;
  r.a.runs = {run(R"({"backend": {"name": "cuda"}})")};
  r.b.runs = {run(R"({})")};
  const auto lines = zl::compare::provenance::lines(r);
  EXPECT_EQ(line(lines, "backend", false), "cuda");
  for (const char* what :
       {"backend", "device", "driver", "FlagGems", "zlcore", "Triton", "torch", "measured (UTC)", "command"}) {
    EXPECT_EQ(line(lines, what, true), "unknown") << what;
  }
  EXPECT_EQ(line(lines, "zlcore", false), "unknown");
}

TEST(Provenance, GivesEachValueWithItsCountWhereABatchsRunsDisagree) {
  Report r;
  r.a.batch = true;
  r.a.runs = {run(R"({"device": {"attributes": {"driver_version": "550.1"}}})"),
              run(R"({"device": {"attributes": {"driver_version": "550.1"}}})"),
              run(R"({"device": {"attributes": {"driver_version": "560.2"}}})"), run(R"({})")};
  r.b.runs = {run(R"({"device": {"attributes": {"driver_version": "550.1"}}})"), run(R"({})")};
  const auto lines = zl::compare::provenance::lines(r);
  EXPECT_EQ(line(lines, "driver", false), "550.1 (2 runs); 560.2 (1 run) (unknown in 1 of 4 runs)");
  EXPECT_EQ(line(lines, "driver", true), "550.1 (unknown in 1 of 2 runs)");
}

TEST(Provenance, NamesVersionsCommitsDatesAndTheCommandAsRecorded) {
  Report r;
  r.a.runs = {run(R"({"started": "2026-12-02T10:30:00Z", "ended": "2026-12-02T10:31:00Z",
                      "versions": {"zlcore": "0.1.0", "zlcore_commit": "abc-dirty",
                                   "flaggems": {"version": "4.1", "git_sha": "f00d", "dirty": true}},
                      "zlcore_command": ["zlcore", "run", "--op", "abs", "--out", "my runs"]})"),
              run(R"({"started": "2026-12-02T09:00:00Z", "ended": "2026-12-02T09:01:00Z"})")};
  r.b.runs = r.a.runs;
  const auto lines = zl::compare::provenance::lines(r);
  EXPECT_EQ(line(lines, "zlcore", false), "0.1.0, commit abc-dirty (unknown in 1 of 2 runs)");
  EXPECT_EQ(line(lines, "FlagGems", false), "4.1, commit f00d with uncommitted changes (unknown in 1 of 2 runs)");
  EXPECT_EQ(line(lines, "measured (UTC)", false), "2026-12-02T09:00:00Z to 2026-12-02T10:31:00Z");
  EXPECT_EQ(line(lines, "command", false), "zlcore run --op abs --out 'my runs' (unknown in 1 of 2 runs)");
}

}  // namespace

// A host name or a command word holding ESC, a newline or a '\r' is what a
// person or a broken tool can leave in run_identity.json: escaped, it can
// neither recolour the terminal nor break the Markdown table's row.
TEST(Provenance, AControlCharacterInARecordedFactIsShownEscaped) {
  Report r;
  r.a.runs = {run(R"({"host": {"name": "node\n1\u001b[31m"}, "zlcore_command": ["zlcore", "run\r", "--op"]})")};
  r.b.runs = {run(R"({})")};
  const auto lines = zl::compare::provenance::lines(r);
  EXPECT_EQ(line(lines, "host", false), "node\\n1\\x1b[31m");
  EXPECT_EQ(line(lines, "command", false), "zlcore 'run\\x0d' --op");
  for (const auto& l : lines) {
    for (const std::string& v : {l.what, l.a, l.b}) {
      for (char c : v) EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20 || c == 0x7f) << l.what << ": " << v;
    }
  }
}
