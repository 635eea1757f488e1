// The steps of opening one backend file, shared by the loader (in process,
// after the file passed its probe) and the probe child (which runs them
// first, where a crash costs nothing), so both give the same reasons.
#pragma once

#include <zl/backend.h>

#include <boost/dll/shared_library.hpp>

#include <filesystem>
#include <functional>
#include <string>

namespace zl::loader {

// Where a backend's own code runs, as the probe child reports it before each
// step: the parent names the step a child died in from the last one it saw.
namespace stage {
constexpr const char* kLoad = "load";              // dlopen: its constructors run
constexpr const char* kEntry = "entry";            // zl_backend_get_api
constexpr const char* kTable = "table";            // reading the table it returned
constexpr const char* kInitialize = "initialize";  // initialize (ABI 1.2)
constexpr const char* kEnumerate = "enumerate";    // enumerate_devices
constexpr const char* kRelease = "release";        // device_list_destroy / error_destroy
constexpr const char* kState = "state";            // query_device_state (ABI 1.2), and its release
constexpr const char* kShutdown = "shutdown";      // shutdown (ABI 1.2)
constexpr const char* kExit = "exit";              // process exit: its destructors run
}  // namespace stage

// "during load", "in the entry point", "in enumerate_devices", ...: the words
// a rejection reason uses for a stage ("" for none seen yet).
std::string stage_words(const std::string& stage);

struct OpenedBackend {
  boost::dll::shared_library lib;
  const zl_backend_api* api = nullptr;  // set when reason is empty
  std::string name;                     // the table's name, as negotiate_abi read it
  std::string reason;                   // why the file is not a usable backend
};

// ELF check, dlopen (RTLD_NOW | RTLD_LOCAL), the entry symbol, the entry call
// and ABI negotiation. `before` (may be empty) is called with each stage just
// before it runs.
OpenedBackend open_backend(const std::filesystem::path& file, const std::function<void(const char*)>& before);

// "10 s", "0.5 s": a time limit as the reasons write it.
std::string seconds_words(double seconds);

// A leading "0x7f E L F": a short, stable reason instead of the dynamic
// linker's wording for a file that is not ELF at all.
bool looks_like_elf(const std::filesystem::path& file);

}  // namespace zl::loader
