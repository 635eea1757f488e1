// The utility layer every part of the core uses: text, CSV, capture, SHA-256.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <filesystem>
#include <limits>
#include <system_error>

#include "util/access_refusal.hpp"
#include "util/clock.hpp"
#include "util/csv.hpp"
#include "util/json.hpp"
#include "util/json_checked.hpp"
#include "util/json_read.hpp"
#include "util/text.hpp"
#include "zlcore/atomic_file.hpp"
#include "zlcore/errors.hpp"
#include "zlcore/process.hpp"
#include "zlcore/sha256.hpp"

namespace {

using Strings = std::vector<std::string>;

TEST(Text, SplitDropsEmptyPiecesAndTrimsOnRequest) {
  EXPECT_EQ(zl::text::split("a,,b,", ","), (Strings{"a", "b"}));
  EXPECT_EQ(zl::text::split(" a , b ", ","), (Strings{" a ", " b "}));
  EXPECT_EQ(zl::text::split(" a , b ", ",", zl::text::kSpace), (Strings{"a", "b"}));
  EXPECT_EQ(zl::text::split("float16, float32 bfloat16", ", "), (Strings{"float16", "float32", "bfloat16"}));
  EXPECT_EQ(zl::text::split("/a::/b", ":"), (Strings{"/a", "/b"}));
  EXPECT_TRUE(zl::text::split("", ",").empty());
}

TEST(Text, TrimAndJoin) {
  EXPECT_EQ(zl::text::trim(" \t x y \r\n"), "x y");
  EXPECT_EQ(zl::text::trim(" \r x \r", " \t"), "\r x \r");
  EXPECT_EQ(zl::text::trim_end("abc\n\r "), "abc");
  EXPECT_EQ(zl::text::trim("   "), "");
  EXPECT_EQ(zl::text::join({"a", "b", "c"}), "a, b, c");
  EXPECT_EQ(zl::text::join({}, ","), "");
  EXPECT_EQ(zl::text::join_some({"a", "b", "c"}, 2), "a; b; and 1 more");
  EXPECT_EQ(zl::text::one_line("a\nb\r\tc"), "a b  c");
  EXPECT_EQ(zl::text::one_line("abcdefgh", 6), "abc...");
}

TEST(Csv, OneRuleQuotesSeparatorsLineEndsAndEdgeSpaces) {
  EXPECT_EQ(zl::csv::field("plain"), "plain");
  EXPECT_EQ(zl::csv::field("a,b"), "\"a,b\"");
  EXPECT_EQ(zl::csv::field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(zl::csv::field("a\rb"), "\"a\rb\"");
  EXPECT_EQ(zl::csv::field("a\nb"), "\"a\nb\"");
  EXPECT_EQ(zl::csv::field(" lead"), "\" lead\"");
  EXPECT_EQ(zl::csv::field("inner space"), "inner space");
  EXPECT_EQ(zl::csv::record({"a", "b,c", ""}), "a,\"b,c\",\n");
}

TEST(Clock, UtcFormats) {
  const std::string iso = zl::utc_now_iso();
  ASSERT_EQ(iso.size(), 24u) << iso;
  EXPECT_EQ(iso.back(), 'Z');
  EXPECT_EQ(iso[10], 'T');
  const std::string compact = zl::utc_stamp_compact();
  ASSERT_EQ(compact.size(), 15u) << compact;
  EXPECT_EQ(compact[8], '-');
}

// FIPS 180-2's known answers.
TEST(Sha256, KnownAnswers) {
  EXPECT_EQ(zl::sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(zl::sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(zl::sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(zl::sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Capture, OutputExitCodeAndStderrOnRequest) {
  zl::CaptureOptions opts;
  zl::Captured c = zl::capture({"sh", "-c", "echo out; echo err >&2; exit 3"}, opts);
  EXPECT_TRUE(c.started);
  EXPECT_EQ(c.exit_code, 3);
  EXPECT_EQ(c.output, "out\n");
  EXPECT_FALSE(c.ok());
  opts.with_stderr = true;
  c = zl::capture({"sh", "-c", "echo out; echo err >&2"}, opts);
  EXPECT_TRUE(c.ok());
  EXPECT_EQ(c.output, "out\nerr\n");
  c = zl::capture({"/nonexistent/tool"}, opts);
  EXPECT_FALSE(c.started);
  EXPECT_FALSE(c.spawn_error.empty());
  EXPECT_EQ(zl::capture_output({"sh", "-c", "printf x"}), std::optional<std::string>("x"));
  EXPECT_EQ(zl::capture_output({"false"}), std::nullopt);
}

TEST(Capture, TimeoutKillsTheWholeGroup) {
  zl::CaptureOptions opts;
  opts.timeout_s = 0.3;
  const double t0 = zl::monotonic_seconds();
  zl::Captured c = zl::capture({"sh", "-c", "sleep 30 & sleep 30"}, opts);
  EXPECT_TRUE(c.timed_out);
  EXPECT_LT(zl::monotonic_seconds() - t0, 10.0);
}

// A child must not inherit a disposition zlcore set for itself: with SIGPIPE
// ignored here, a child writing to a closed pipe would otherwise go on.
TEST(Capture, ChildStartsWithDefaultSignalDispositions) {
  auto old = std::signal(SIGTERM, SIG_IGN);
  zl::Captured c = zl::capture({"sh", "-c", "grep SigIgn /proc/self/status"}, {});
  std::signal(SIGTERM, old);
  ASSERT_TRUE(c.ok()) << c.output;
  // SIGTERM is signal 15: bit 14 of the mask; the shell itself may ignore
  // nothing else that matters here.
  const std::string mask = c.output.substr(c.output.find(':') + 1);
  const unsigned long long ignored = std::stoull(zl::text::trim(mask), nullptr, 16);
  EXPECT_EQ(ignored & (1ull << (SIGTERM - 1)), 0ull) << c.output;
}

TEST(JsonChecked, TypedAccessNamesTheMemberThatIsWrong) {
  rapidjson::Document d;
  ASSERT_EQ(zl::json::parse(d, R"({"s": "x", "n": 1.5, "i": 3, "a": ["p", "q"], "bad": [1]})"), "");
  EXPECT_EQ(zl::json::string_at(d, "s"), "x");
  EXPECT_DOUBLE_EQ(zl::json::number_at(d, "n"), 1.5);
  EXPECT_EQ(zl::json::int_at(d, "i"), 3);
  EXPECT_EQ(zl::json::strings(zl::json::array_at(d, "a"), "'a'"), (Strings{"p", "q"}));
  auto message = [&](auto&& f) {
    try {
      f();
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(message([&] { zl::json::string_at(d, "missing"); }), "'missing' is missing");
  EXPECT_EQ(message([&] { zl::json::string_at(d, "n"); }), "'n' is not a string");
  EXPECT_EQ(message([&] { zl::json::int_at(d, "n"); }), "'n' is not an integer");
  EXPECT_EQ(message([&] { zl::json::array_at(d, "s"); }), "'s' is not an array");
  EXPECT_EQ(message([&] { zl::json::strings(zl::json::array_at(d, "bad"), "'bad'"); }),
            "'bad' holds a value that is not a string");
}

}  // namespace

namespace {

TEST(JsonWrite, NonFiniteNumbersAreWrittenAsNullAndTheDocumentStaysWhole) {
  rapidjson::Document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  d.AddMember("inf", std::numeric_limits<double>::infinity(), a);
  d.AddMember("nan", std::numeric_limits<double>::quiet_NaN(), a);
  d.AddMember("after", 1.5, a);
  EXPECT_EQ(zl::json::compact(d), "{\"inf\":null,\"nan\":null,\"after\":1.5}");
  rapidjson::Document back;
  EXPECT_EQ(zl::json::parse(back, zl::json::pretty(d)), "");
  EXPECT_TRUE(back.IsObject() && back.HasMember("after"));
}

TEST(AccessRefusal, APermissionOrReadOnlyRefusalNamesThePathInOneLine) {
  const std::filesystem::filesystem_error denied("cannot create directories", "/srv/out/b",
                                                 std::error_code(EACCES, std::generic_category()));
  EXPECT_EQ(zl::access_refusal(denied), "cannot create directories /srv/out/b: Permission denied");
  const std::filesystem::filesystem_error stat("status", "/srv/out/ops_status.csv",
                                               std::error_code(EACCES, std::generic_category()));
  EXPECT_EQ(zl::access_refusal(stat), "cannot look at /srv/out/ops_status.csv: Permission denied");
  const zl::WriteError ro("cannot write /ro/f.json", EROFS);
  EXPECT_EQ(zl::access_refusal(ro), "cannot write /ro/f.json: Read-only file system");
  // A path no call can use as given: a loop of links, a name past the limit (shown by its start).
  const std::filesystem::filesystem_error loop("status", "runs/loop", std::error_code(ELOOP, std::generic_category()));
  EXPECT_EQ(zl::access_refusal(loop), "cannot look at runs/loop: Too many levels of symbolic links");
  const std::filesystem::filesystem_error long_name("status", std::string(5000, 'a'),
                                                    std::error_code(ENAMETOOLONG, std::generic_category()));
  EXPECT_EQ(zl::access_refusal(long_name), "cannot look at " + std::string(160, 'a') + "...: File name too long");
  // Anything else stays what it was: not the user's directory to fix.
  const std::filesystem::filesystem_error missing("status", "/x", std::error_code(ENOENT, std::generic_category()));
  EXPECT_EQ(zl::access_refusal(missing), "");
  EXPECT_EQ(zl::access_refusal(std::runtime_error("boom")), "");
  EXPECT_EQ(zl::access_refusal(zl::WriteError("cannot write /f", ENOSPC)), "");
}

}  // namespace

// An atomic write renames over its target: a FIFO or a device there (an
// --html or --out of /dev/null) would be destroyed. Refused, the node kept;
// a regular file or a link is still replaced.
TEST(AtomicFile, AFifoOrDeviceAtTheTargetIsRefusedAndKept) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("zl-atomic-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string fifo = (dir / "pipe").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THROW(zl::write_file_atomic(fifo, "x"), zl::UsageError);
  EXPECT_TRUE(std::filesystem::is_fifo(fifo));
  EXPECT_THROW(zl::write_file_atomic(dir.string(), "x"), zl::UsageError);
  const std::string file = (dir / "file").string();
  zl::write_file_atomic(file, "a");
  zl::write_file_atomic(file, "b");
  EXPECT_EQ(zl::read_file(file), "b");
  std::filesystem::create_symlink("file", dir / "link");
  zl::write_file_atomic((dir / "link").string(), "c");
  EXPECT_FALSE(std::filesystem::is_symlink(dir / "link"));
  EXPECT_EQ(zl::read_file(file), "b");
  std::filesystem::remove_all(dir);
}
