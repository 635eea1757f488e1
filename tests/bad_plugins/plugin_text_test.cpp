// What a backend says about its devices reaches terminals and JSON readers.
// Names and attributes with newlines, escape sequences or bytes that are
// not UTF-8 are shown escaped, in the table and in `devices --json` (which
// stays valid UTF-8); an id that could not travel as it is, or a device
// entry with struct_size 0, is listed among the rejected devices with why,
// never dropped in silence; and a backend that prints on stdout during
// enumerate leaves `devices --json` parseable, with one line on stderr
// saying what it wrote.
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include "zltest/child.hpp"
#include "zltest/files.hpp"
#include "zltest/temp_dir.hpp"
#include "zltest/zlcore_cli.hpp"

namespace {

using zltest::TempDir;
namespace fs = std::filesystem;

fs::path one_backend(const TempDir& tmp, const std::string& file) {
  const fs::path dir = tmp / "plugins";
  fs::create_directories(dir);
  fs::copy_file(fs::path(ZL_FAULTS_DIR) / file, dir / file);
  return dir;
}

// Parsed as a strict reader would: invalid UTF-8 is an error.
bool parse_strict(const std::string& text, rapidjson::Document* d, std::string* why) {
  d->Parse<rapidjson::kParseValidateEncodingFlag>(text.c_str());
  if (d->HasParseError()) *why = rapidjson::GetParseError_En(d->GetParseError());
  return !d->HasParseError() && d->IsObject();
}

bool has_byte(const std::string& s, char c) { return s.find(c) != std::string::npos; }

const char* const kEscapedName = "Fake\\n\\x1b[31mRed\\x1b[0m \\xff\\xfe";

TEST(PluginText, DeviceNamesIdsAndAttributesAreEscapedOnTheTerminal) {
  TempDir tmp;
  const fs::path dir = one_backend(tmp, "odd_text.so");
  zltest::Ran r = zltest::zlcore({"--backend-dir", dir.string(), "devices", "--backend", "oddtext"}, tmp.path());
  EXPECT_EQ(r.exit_code, 0) << zltest::describe(r);
  EXPECT_FALSE(has_byte(r.out, '\x1b')) << zltest::describe(r);
  EXPECT_FALSE(has_byte(r.err, '\x1b')) << zltest::describe(r);
  EXPECT_FALSE(has_byte(r.out, '\xff')) << zltest::describe(r);
  EXPECT_EQ(zltest::count_lines(r.out), 3u) << zltest::describe(r);  // header, the device, its attributes
  EXPECT_NE(r.out.find(std::string("[0] ") + kEscapedName + "  id FAKE-0000"), std::string::npos)
      << zltest::describe(r);
  EXPECT_NE(r.out.find("[0] arch\\x1b[2J\\nitecture=fake\\xc3arch\\x0d"), std::string::npos) << zltest::describe(r);
  EXPECT_EQ(r.err,
            "zlcore: devices: oddtext: left out: device [1] id 'FAKE-\\x1b]0;owned\\x07' is not printable text\n")
      << zltest::describe(r);
}

TEST(PluginText, DevicesJsonStaysValidUtf8WithTheSameEscapes) {
  TempDir tmp;
  const fs::path dir = one_backend(tmp, "odd_text.so");
  zltest::Ran r =
      zltest::zlcore({"--backend-dir", dir.string(), "devices", "--backend", "oddtext", "--json"}, tmp.path());
  EXPECT_EQ(r.exit_code, 0) << zltest::describe(r);
  rapidjson::Document d;
  std::string why;
  ASSERT_TRUE(parse_strict(r.out, &d, &why)) << why << "\n" << zltest::describe(r);
  ASSERT_EQ(d["devices"].Size(), 1u) << r.out;
  EXPECT_EQ(std::string(d["devices"][0]["name"].GetString()), kEscapedName);
  EXPECT_TRUE(d["devices"][0]["attributes"].HasMember("arch\\x1b[2J\\nitecture")) << r.out;
  ASSERT_EQ(d["rejected_devices"].Size(), 1u) << r.out;
  EXPECT_EQ(std::string(d["rejected_devices"][0]["id"].GetString()), "FAKE-\\x1b]0;owned\\x07");
  EXPECT_EQ(d["rejected_devices"][0]["index"].GetInt(), 1);
}

TEST(PluginText, ADeviceWithStructSizeZeroIsListedAsRejected) {
  TempDir tmp;
  const fs::path dir = one_backend(tmp, "device_size_zero.so");
  zltest::Ran r =
      zltest::zlcore({"--backend-dir", dir.string(), "devices", "--backend", "sizezero", "--json"}, tmp.path());
  EXPECT_EQ(r.exit_code, 0) << zltest::describe(r);
  rapidjson::Document d;
  std::string why;
  ASSERT_TRUE(parse_strict(r.out, &d, &why)) << why << "\n" << zltest::describe(r);
  EXPECT_EQ(d["devices"].Size(), 1u) << r.out;
  ASSERT_EQ(d["rejected_devices"].Size(), 1u) << r.out;
  EXPECT_EQ(d["rejected_devices"][0]["index"].GetInt(), 1);
  const std::string reason = d["rejected_devices"][0]["reason"].GetString();
  EXPECT_EQ(reason.rfind("device list entry [1] has struct_size 0, less than a device's ", 0), 0u) << reason;
  EXPECT_NE(r.err.find("left out: device list entry [1] has struct_size 0"), std::string::npos) << zltest::describe(r);
}

TEST(PluginText, ABackendPrintingOnStdoutLeavesTheJsonClean) {
  TempDir tmp;
  const fs::path dir = one_backend(tmp, "prints_on_stdout.so");
  zltest::Ran r =
      zltest::zlcore({"--backend-dir", dir.string(), "devices", "--backend", "chatty", "--json"}, tmp.path());
  EXPECT_EQ(r.exit_code, 0) << zltest::describe(r);
  rapidjson::Document d;
  std::string why;
  ASSERT_TRUE(parse_strict(r.out, &d, &why)) << why << "\n" << zltest::describe(r);
  EXPECT_EQ(d["devices"].Size(), 2u) << r.out;
  EXPECT_EQ(r.out.find("fake backend"), std::string::npos) << zltest::describe(r);
  const std::string said = "zlcore: backend 'chatty' (" + (dir / "prints_on_stdout.so").string() +
                           ") wrote 63 bytes on stdout in enumerate_devices; kept off zlcore's stdout: \"fake backend: "
                           "raw write\\nfake backend banner: hello from printf\\n\"\n";
  EXPECT_NE(r.err.find(said), std::string::npos) << zltest::describe(r);
  // The plain table too: only zlcore's own lines on stdout.
  r = zltest::zlcore({"--backend-dir", dir.string(), "devices", "--backend", "chatty"}, tmp.path());
  EXPECT_EQ(r.exit_code, 0) << zltest::describe(r);
  EXPECT_EQ(r.out.rfind("chatty: 2 device(s) via fake\n", 0), 0u) << zltest::describe(r);
  EXPECT_EQ(r.out.find("fake backend"), std::string::npos) << zltest::describe(r);
}

}  // namespace
