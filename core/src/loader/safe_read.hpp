// Reading memory a backend points to without trusting the pointer. A table
// or device list that lies (a bogus extension_start, a capability_count
// larger than its array, a string pointer into nowhere) must give a reason,
// not a SIGSEGV: every byte the core takes from a backend's data is copied
// through here, by the kernel (process_vm_readv on ourselves, a pipe where
// that is refused), which answers EFAULT for memory that is not mapped.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace zl::loader {

// Longest string the core takes from a backend (a name, an id, an
// attribute value, a reason); a longer one reads as unreadable.
constexpr size_t kMaxBackendString = 4096;

// Copies n bytes at `from` into `to`; false (and `to` unspecified) when any
// of them cannot be read.
bool copy_from_backend(const void* from, void* to, size_t n);

// Makes every later copy go through the pipe, as when process_vm_readv is
// refused (false: try process_vm_readv again). The two ways must read the
// same bytes and refuse the same addresses; tests and the table's fuzz
// target exercise both.
void use_pipe_copies(bool on);

// A copy of the struct at `from` whose first member is its size_t
// struct_size: min(struct_size, sizeof(T)) bytes, zero past them, so a
// field outside the backend's struct_size reads as 0 / NULL. nullopt when
// the bytes cannot be read.
template <class T>
std::optional<T> copy_struct(const void* from) {
  size_t size = 0;
  if (from == nullptr || !copy_from_backend(from, &size, sizeof size)) return std::nullopt;
  T out{};
  if (!copy_from_backend(from, &out, size < sizeof(T) ? size : sizeof(T))) return std::nullopt;
  out.struct_size = size;
  return out;
}

// The NUL-terminated string at `p`: nullopt when p is NULL, a byte of it
// cannot be read, or it runs past kMaxBackendString.
std::optional<std::string> read_backend_string(const char* p);

// "0x7f00dead": a pointer as the reasons name it.
std::string pointer_words(const void* p);

}  // namespace zl::loader
