// The pure parts of `zlcore ab`: the order of a round's sides, rounds.csv
// written and read back, and how a side's rounds become a row's test values.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "zlcore/ab.hpp"
#include "zlcore/errors.hpp"

namespace fs = std::filesystem;
using namespace zl;

TEST(AbOrder, ConsecutiveRoundsReadABBA) {
  std::string seq;
  for (int r = 1; r <= 4; ++r) {
    for (const std::string& s : ab::round_order(r, false)) seq += s;
  }
  EXPECT_EQ(seq, "ABBAABBA");
}

TEST(AbOrder, CalibrateKeepsAAndA2SymmetricAroundB) {
  EXPECT_EQ(ab::round_order(1, true), (std::vector<std::string>{"A", "B", "A2"}));
  EXPECT_EQ(ab::round_order(2, true), (std::vector<std::string>{"A2", "B", "A"}));
}

class AbDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("zl_ab_unit_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  fs::path dir_;
};

TEST_F(AbDir, RoundsCsvRoundTripsAndDropsATornLastRecord) {
  ab::RoundLine l{"abs", 3, 2, "B", "crashed", 1, 1.5, "runs/abs/r3-t2/B", "worker died, \"signal 11\"\nagain"};
  const fs::path csv = dir_ / "rounds.csv";
  write(csv, ab::rounds_csv_header() + ab::rounds_csv_record(l) + "abs,4,1,A,pas");
  const auto lines = ab::read_rounds_csv(csv.string());
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].op, "abs");
  EXPECT_EQ(lines[0].round, 3);
  EXPECT_EQ(lines[0].attempt, 2);
  EXPECT_EQ(lines[0].side, "B");
  EXPECT_EQ(lines[0].device, 1);
  EXPECT_EQ(lines[0].reason, "worker died, \"signal 11\" again");  // one line
}

TEST_F(AbDir, RoundsCsvOfAnotherToolIsRefused) {
  write(dir_ / "rounds.csv", "op,status\nabs,passed\n");
  EXPECT_THROW(ab::read_rounds_csv((dir_ / "rounds.csv").string()), UsageError);
}

// Two rounds of one side, one row each, five placements a round.
TEST_F(AbDir, RoundsGiveOneValueEachAndPlacementsPool) {
  std::vector<std::string> dirs;
  const std::vector<std::vector<double>> rounds = {{1, 2, 3, 4, 100}, {5, 6, 7, 8, 9}};
  for (size_t r = 0; r < rounds.size(); ++r) {
    const fs::path run = dir_ / ("r" + std::to_string(r + 1)) / "A";
    write(run / "run_identity.json", R"({"op": "abs", "status": "passed"})");
    std::string placements;
    double sum = 0;
    for (double v : rounds[r]) {
      placements += (placements.empty() ? "" : ", ") + std::to_string(v);
      sum += v;
    }
    write(run / "results.jsonl",
          R"({"op": "abs", "dtype": "float32", "shape": "[64]", "timer": "host", "latency_ms": )" +
              std::to_string(sum / 5) + R"(, "placements_ms": [)" + placements + "]}\n");
    dirs.push_back(run.string());
  }
  const compare::Side by_round = ab::pool_side("A", "x", {{"abs", dirs}}, ab::Samples::rounds);
  ASSERT_EQ(by_round.runs.size(), 1u);
  ASSERT_EQ(by_round.runs[0].rows.size(), 1u);
  const compare::ResultRow& r = by_round.runs[0].rows[0];
  // The slow placement of round 1 moves its median, not the row.
  EXPECT_EQ(r.placements_ms, (std::vector<double>{3, 7}));
  EXPECT_DOUBLE_EQ(*r.latency_ms, 5);

  const compare::Side pooled = ab::pool_side("A", "x", {{"abs", dirs}}, ab::Samples::placements);
  const compare::ResultRow& p = pooled.runs[0].rows[0];
  EXPECT_EQ(p.placements_ms.size(), 10u);
  EXPECT_DOUBLE_EQ(*p.latency_ms, 145.0 / 10);
  EXPECT_EQ(p.repeats, 10);
}
