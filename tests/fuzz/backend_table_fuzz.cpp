// A backend's table and device list as the probe child and the loader read
// them, built from the fuzz bytes: the bytes are the backend's memory, laid
// out to end exactly where an unreadable page begins, and any 8-byte word
// tagged 0xA5, 0xA6 or 0xA7 in its top byte becomes a pointer into that
// memory, just past its end, or into the first page (which nothing maps).
// Untagged words stay what they are: pointers into anywhere. negotiate_abi
// (which follows the whole table: names, aliases, capabilities, extension
// chain) and read_device_list (every device, string and attribute) must
// never crash; whatever they accept must be printable, strict UTF-8 text.
//
// Input: byte 0..1 the device list's offset in the memory, byte 2 the ABI
// minor the list is read with (low 2 bits), whether the backend pins
// devices (bit 2) and whether the bytes are copied through the pipe, as
// where process_vm_readv is refused (bit 3: a container's seccomp profile
// refuses it, so CI takes that way); the rest is the memory, the table at
// its start.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "../../core/src/loader/device_read.hpp"
#include "../../core/src/loader/safe_read.hpp"
#include "../../core/src/loader/table_read.hpp"
#include "../../core/src/util/printable.hpp"
#include "zlcore/backend.hpp"

namespace {

constexpr size_t kMaxMemory = 1 << 16;

// kMaxMemory readable bytes followed by a page that is not readable.
char* arena_end() {
  static char* end = [] {
    const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    const size_t readable = (kMaxMemory + page - 1) / page * page;
    auto* base = static_cast<char*>(
        ::mmap(nullptr, readable + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (base == MAP_FAILED) std::abort();
    ::mprotect(base + readable, page, PROT_NONE);
    return base + readable;
  }();
  return end;
}

// Turns tagged words into pointers the way a lying backend would hold them.
void place_pointers(char* memory, size_t size) {
  for (size_t at = 0; at + 8 <= size; at += 8) {
    uint64_t word;
    std::memcpy(&word, memory + at, 8);
    const uint64_t tag = word >> 56, low = word & 0xffff;
    uintptr_t p;
    if (tag == 0xA5) {
      p = reinterpret_cast<uintptr_t>(memory) + low % size;  // inside
    } else if (tag == 0xA6) {
      p = reinterpret_cast<uintptr_t>(memory + size) + low % 64;  // just past the end
    } else if (tag == 0xA7) {
      p = low % 4096;  // the first page: NULL and near it
    } else {
      continue;
    }
    std::memcpy(memory + at, &p, 8);
  }
}

// Strict UTF-8 (RFC 3629) with no control character: an independent check
// of what printable() promises.
bool clean_text(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) return false;
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t n = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    uint32_t cp = c & (n == 2 ? 0x1F : n == 3 ? 0x0F : 0x07);
    for (size_t k = 1; k < n; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if ((b & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (b & 0x3F);
    }
    const uint32_t least = n == 2 ? 0x80 : n == 3 ? 0x800 : 0x10000;
    if (cp < least || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    if (cp >= 0x80 && cp <= 0x9F) return false;  // C1 controls
    i += n;
  }
  return true;
}

// Which promise broke, on stderr, before the abort that libFuzzer records.
void require_at(bool ok, const char* what, int line) {
  if (ok) return;
  std::fprintf(stderr, "backend_table_fuzz.cpp:%d: broken: %s\n", line, what);
  std::abort();
}
#define require(ok) require_at((ok), #ok, __LINE__)

void check_table(const zl_backend_api* api) {
  (void)zl::negotiate_abi(api);
  const zl::loader::TableRead read = zl::loader::read_table(api);
  // Accepted or not, everything the core keeps of it is clean text. An
  // untagged word may point into this process's own heap or stack, which
  // the first read itself changes (its strings are allocated there), so
  // the second read may see other bytes, as for a backend whose table
  // changes between two calls: the promise holds for that read too.
  require(clean_text(read.problem));
  require(clean_text(read.name));
  for (const auto& [key, value] : read.capabilities) require(clean_text(key) && clean_text(value));
  for (const std::string& v : read.visibility_env) require(clean_text(v));
  require(clean_text(read.torch_device) && clean_text(read.framework_vendor) && clean_text(read.backend_version));
}

void check_list(const zl_device_list* list, uint32_t minor, bool pins) {
  zl::DeviceQuery q;
  zl::loader::read_device_list(list, minor, pins ? "FUZZ_VISIBLE_DEVICES" : "", q);
  for (const zl::Device& d : q.devices) {
    require(!d.id.empty() && clean_text(d.id) && clean_text(d.name) && clean_text(d.visibility_value));
    require(!pins || !d.visibility_value.empty());
    for (const zl::NamedValue& v : d.attributes) require(clean_text(v.name) && clean_text(v.text));
  }
  for (const zl::RejectedDevice& r : q.rejected) require(!r.reason.empty() && clean_text(r.device.id));
  require(clean_text(q.reason) && clean_text(q.source));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  const size_t list_offset = static_cast<size_t>(data[0]) | static_cast<size_t>(data[1]) << 8;
  const uint32_t minor = data[2] & 3;
  const bool pins = (data[2] & 4) != 0;
  zl::loader::use_pipe_copies((data[2] & 8) != 0);
  size_t n = size - 3;
  if (n > kMaxMemory) n = kMaxMemory;
  char* memory = arena_end() - n;
  std::memcpy(memory, data + 3, n);
  place_pointers(memory, n);
  check_table(reinterpret_cast<const zl_backend_api*>(memory));
  check_list(reinterpret_cast<const zl_device_list*>(memory + (n > 0 ? list_offset % n : 0)), minor, pins);
  return 0;
}
