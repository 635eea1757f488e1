/*
 * zl/backend.h -- the whole contract between zlcore and an accelerator backend.
 *
 * A backend is a shared object that exports exactly one symbol,
 * ZL_BACKEND_ENTRY_SYMBOL, returning a pointer to a zl_backend_api table.
 * This header is pure C (C99 and C++ both compile it); it is the only header
 * a vendor needs. docs/backend-abi.md states the rules normatively; the short
 * version:
 *
 *   - ABI major must equal the core's exactly; a backend whose major differs is
 *     skipped with a reason.
 *   - Every struct begins with `struct_size`, set by whoever allocates it to
 *     sizeof the struct it was compiled against. A reader touches a field only
 *     when the field lies entirely within struct_size (ZL_STRUCT_HAS_FIELD), so
 *     either side may be older or newer within one major.
 *   - Entries added in a later minor are optional: the core checks the minor
 *     and a NULL pointer before calling one.
 *   - Errors are values (zl_error), allocated by the backend and released
 *     through the same backend's error_destroy. No C++ types, no exceptions,
 *     no longjmp cross this boundary.
 *   - The core does not unload a backend it accepted: pointers marked
 *     "static lifetime" below must stay valid until the process exits. A file
 *     the loader rejected (wrong major, bad table) IS unloaded (dlclose), so
 *     nothing a rejected backend started may outlive its table: no threads,
 *     no atexit handlers into its code.
 *   - Rules the core relies on (the loader enforces the ones marked [checked]):
 *       * a backend with a visibility variable gives every device a non-empty
 *         visibility_value [checked: a device without one is rejected with a
 *         reason, since VAR="" leaves the child with no device];
 *       * every device has a non-empty id [checked]; the child's pin check
 *         compares that id with what the framework reports, so prefer the
 *         form the runtime itself prints (a "GPU-..." UUID, a PCI bus id);
 *       * torch_device names the torch device type the framework registers
 *         ("cuda", "musa", "npu", "cpu"): the child calls torch.<it>;
 *       * enumerate is called before every dispatch round of a batch: it must
 *         be fast (well under ZL_BACKEND_TIMEOUT, 10 s) and cache nothing that
 *         changes (memory in use, utilization);
 *       * nothing may be written on stdout: zlcore's stdout is its table or
 *         its JSON; diagnostics go to stderr, and only when asked;
 *       * zlcore's signal handlers are installed without SA_RESTART: a
 *         blocking call inside the backend may fail with EINTR and must be
 *         retried by the backend;
 *       * no C++ exception may leave any entry (the kit's barrier,
 *         zl/backend_kit.hpp, turns one into a zl_error).
 *   - docs/backend-abi.md (installed next to this header, share/doc/zlcore)
 *     states the same rules with the loader's reasons.
 *   - zlcore-conform BACKEND.so (installed beside zlcore) checks a built
 *     backend against every rule a program can check, one line per rule;
 *     zlcore_add_conformance_test(name) of the CMake package makes it a test.
 */
#ifndef ZL_BACKEND_H_
#define ZL_BACKEND_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version of this header. The core accepts a backend whose major is equal. */
#define ZL_BACKEND_ABI_MAJOR 1
#define ZL_BACKEND_ABI_MINOR 2

/* The one symbol a backend exports. */
#define ZL_BACKEND_ENTRY_SYMBOL "zl_backend_get_api"

/* Visibility for the entry point; build everything else with
 * -fvisibility=hidden so two backends' helpers never shadow each other. */
#if defined(_WIN32)
#define ZL_BACKEND_EXPORT __declspec(dllexport)
#else
#define ZL_BACKEND_EXPORT __attribute__((visibility("default")))
#endif

/* The size of `type` measured to the end of `last_field`, without the
 * trailing padding sizeof adds (PJRT's PJRT_STRUCT_SIZE). Each struct below has
 * a ZL_<NAME>_STRUCT_SIZE constant made this way; an allocator sets
 * struct_size to it. Because padding is not counted, a field appended in a
 * later minor never makes an older struct_size claim bytes it did not write.
 * The constants are checked against the last field by static assertions at
 * the end of this header: a field appended without moving the constant fails
 * to compile. */
#define ZL_STRUCT_SIZE(type, last_field) (offsetof(type, last_field) + sizeof(((type*)0)->last_field))

/* True when a struct whose first member is struct_size, as reported by its
 * allocator, is large enough to contain `field`. */
#define ZL_STRUCT_HAS_FIELD(ptr, type, field) ((ptr)->struct_size >= offsetof(type, field) + sizeof(((type*)0)->field))

/* ------------------------------------------------------------------------ */
/* Extensions                                                                */

/* An extension is a struct that begins with these three members. Chains start
 * at zl_backend_api.extension_start (what the backend offers beyond this
 * header) and at every args struct's extension_start (what the caller passes
 * in). A reader walks `next` and skips every type it does not know, so either
 * side may add one without a new minor. Types below 0x10000 are reserved for
 * this header; a vendor picks its own from 0x10000 up. The chain and every
 * extension in it are owned by whoever made the struct that points to it:
 * static lifetime from the table, the duration of the call from an args
 * struct. Nothing in this header defines a type yet: the chain exists so that
 * a call never needs a new signature to grow. */
typedef struct zl_extension_base {
  size_t struct_size;
  uint32_t type;
  const struct zl_extension_base* next; /* NULL ends the chain */
} zl_extension_base;
#define ZL_EXTENSION_BASE_STRUCT_SIZE ZL_STRUCT_SIZE(zl_extension_base, next)
#define ZL_EXTENSION_TYPE_VENDOR_FIRST 0x10000u

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */

typedef enum zl_error_code {
  ZL_OK = 0,
  ZL_ERROR_UNAVAILABLE = 1, /* the driver or tool is absent or failed */
  ZL_ERROR_INVALID_ARGUMENT = 2,
  ZL_ERROR_PARSE = 3, /* a tool answered, but not in a known form */
  ZL_ERROR_INTERNAL = 4
} zl_error_code;

/* Allocated by the backend; the core releases it with the same backend's
 * error_destroy and never frees it itself. */
typedef struct zl_error {
  size_t struct_size;
  zl_error_code code;
  /* Owned by the error; valid until error_destroy(error). UTF-8, one line. */
  const char* message;
} zl_error;
#define ZL_ERROR_STRUCT_SIZE ZL_STRUCT_SIZE(zl_error, message)

/* ------------------------------------------------------------------------ */
/* Static description                                                        */

/* A capability is an open-ended key/value pair. Keys the core's plan rules
 * know today: "graph_capture" (value: the Python graph API, for example
 * "torch.cuda.CUDAGraph"), "cluster_fix" (value: "1"), "device_events"
 * (value: "1"), "torch_profiler" (value: the torch.profiler activity its
 * kernels are recorded under, "cuda" or "cpu": what `--profile` runs). A
 * backend may declare keys no rule uses yet.
 * The one struct without struct_size: it was fixed at ABI 1.0 as two
 * pointers and never grows (an array of it is strided by sizeof); anything a
 * capability would need beyond a string goes into the extension chain. */
typedef struct zl_capability {
  const char* key;   /* static lifetime */
  const char* value; /* static lifetime; "1" for a plain flag */
} zl_capability;

/* ------------------------------------------------------------------------ */
/* Named values (minor 2): device attributes and device state               */

typedef enum zl_value_type {
  ZL_VALUE_STRING = 0, /* string_value */
  ZL_VALUE_INT64 = 1,  /* int64_value */
  ZL_VALUE_DOUBLE = 2, /* double_value */
  ZL_VALUE_BOOL = 3    /* int64_value: 0 or 1 */
} zl_value_type;

/* One typed key/value. The name carries the unit ("_mhz", "_w", "_bytes").
 * A value the backend does not know is left out, never sent as 0 or "".
 * Names the core knows (others are recorded and shown as they are):
 *
 *   attributes (static for the life of the process; zl_device_info.attributes)
 *     architecture            string  "hopper", "cdna3", "x86_64"
 *     compute_capability      string  "9.0" (CUDA), "gfx942" (ROCm), ...
 *     driver_version          string  the kernel driver's version
 *     runtime_version         string  the newest runtime the driver supports
 *     compute_units           int64   SMs, CUs, AI cores, CPU cores
 *     clock_sm_max_mhz        int64   highest compute clock
 *     clock_memory_max_mhz    int64   highest memory clock
 *     clock_sm_application_mhz int64  the clock the device is set to run at
 *                                     (application or locked clocks: the
 *                                     "clocks policy" a caliber check names)
 *     clocks_policy           string  how clocks are governed where no
 *                                     application clock says it ("default",
 *                                     a CPU governor such as "performance")
 *     memory_bus_width_bits   int64
 *     memory_bandwidth_peak_gbps double  peak memory bandwidth, 1e9 bytes/s
 *     memory_bandwidth_source string  how the peak was derived
 *     l2_cache_bytes          int64   the last-level cache all compute units
 *                                     share (the L2 of a GPU), above 0: what
 *                                     `--l2 cold` clears before each timed
 *                                     call. Optional like every name: without
 *                                     it a backend loads as before and only
 *                                     `--l2 cold` is refused on its devices
 *     compute_peak_tflops.<dtype> double  dense peak for that element type
 *                                     (dtype as torch spells it: float16,
 *                                     bfloat16, float32, float64, int8),
 *                                     1e12 operations/s; only where the vendor
 *                                     publishes the per-clock rate
 *     compute_peak_source     string  how the compute peaks were derived
 *     power_limit_w           double  the enforced board power limit
 *     ecc_enabled             bool
 *     bus_id                  string  PCI bus id, "0000:19:00.0"
 *
 *   state (now; zl_device_state.values)
 *     clock_sm_mhz            int64
 *     clock_memory_mhz        int64
 *     power_draw_w            double
 *     temperature_c           int64
 *     throttle_reasons        string  comma-separated: "none", "idle",
 *                                     "power_cap", "thermal", "sw_power_cap",
 *                                     "hw_slowdown", "app_clocks", ...
 *     utilization_percent     int64   0..100
 *     memory_used_bytes       int64
 */
typedef struct zl_named_value {
  size_t struct_size;
  const char* name; /* owned by the list or state holding it; never NULL */
  zl_value_type type;
  const char* string_value; /* ZL_VALUE_STRING: owned like name, never NULL */
  int64_t int64_value;      /* ZL_VALUE_INT64, ZL_VALUE_BOOL */
  double double_value;      /* ZL_VALUE_DOUBLE */
} zl_named_value;
#define ZL_NAMED_VALUE_STRUCT_SIZE ZL_STRUCT_SIZE(zl_named_value, double_value)

/* ------------------------------------------------------------------------ */
/* Devices                                                                   */

typedef struct zl_device_info {
  size_t struct_size; /* ZL_DEVICE_INFO_STRUCT_SIZE, or an older minor's */
  /* Index as the vendor tool numbers devices, ignoring any visibility
   * variable. Also what device_state_args.index names. */
  int32_t index;
  /* Stable identity (UUID, PCI bus id, chip logic id). Never NULL or empty
   * (the core rejects such a device). Owned by the list. */
  const char* id;
  /* Marketing name, e.g. "NVIDIA H200". Never NULL. Owned by the list. */
  const char* name;
  /* Total memory in bytes; 0 when unknown. */
  uint64_t memory_total_bytes;
  /* Memory in use in bytes; -1 when the tool does not say. */
  int64_t memory_used_bytes;
  /* Busy percentage 0..100; -1 when the tool does not say. */
  int32_t utilization_percent;
  /* The value to put into every visibility variable so that a child sees
   * this device alone (an index, a UUID, ...). NULL when the backend has no
   * visibility variable; never NULL or empty when it has one (the core
   * rejects such a device with a reason). Owned by the list. */
  const char* visibility_value;

  /* ---- minor 2 ---- */

  /* attribute_count named values (names listed above); NULL when 0. The
   * array is strided by attributes[0].struct_size. Owned by the list. */
  size_t attribute_count;
  const zl_named_value* attributes;
} zl_device_info;
#define ZL_DEVICE_INFO_STRUCT_SIZE ZL_STRUCT_SIZE(zl_device_info, attributes)
/* What a minor-0 or minor-1 backend sets (everything up to visibility_value). */
#define ZL_DEVICE_INFO_STRUCT_SIZE_1_1 ZL_STRUCT_SIZE(zl_device_info, visibility_value)

/* All strings inside a list, and the devices array itself, are owned by the
 * list and valid until device_list_destroy(list). */
typedef struct zl_device_list {
  size_t struct_size;
  size_t count;
  /* count entries; NULL when count == 0. The array's stride is
   * devices[0].struct_size (equal for every entry), so a list built against a
   * newer or older zl_device_info still indexes correctly: an allocator that
   * sets struct_size to a ZL_..._STRUCT_SIZE constant must lay the array out
   * with that stride, not sizeof (the kit's builders do). */
  const zl_device_info* devices;
  /* Why there are no devices ("libnvidia-ml.so.1 not found and nvidia-smi not
   * on PATH"), or NULL when count > 0. */
  const char* reason;
  /* Which source answered: "library", "tool", "host", ... Never NULL. */
  const char* source;
} zl_device_list;
#define ZL_DEVICE_LIST_STRUCT_SIZE ZL_STRUCT_SIZE(zl_device_list, source)

/* What query_device_state returns (minor 2). Everything reachable from it is
 * owned by it and valid until device_state_destroy(state). */
typedef struct zl_device_state {
  size_t struct_size;
  /* value_count named values (state names listed above), strided by
   * values[0].struct_size; NULL when 0. */
  size_t value_count;
  const zl_named_value* values;
} zl_device_state;
#define ZL_DEVICE_STATE_STRUCT_SIZE ZL_STRUCT_SIZE(zl_device_state, values)

/* ------------------------------------------------------------------------ */
/* Args structs (minor 2). The caller owns each args struct and everything
 * it points to for the duration of the call; the backend writes only the
 * members marked "out" and keeps no pointer into it after returning. */

typedef struct zl_initialize_args {
  size_t struct_size;
  const zl_extension_base* extension_start; /* in; may be NULL */
} zl_initialize_args;
#define ZL_INITIALIZE_ARGS_STRUCT_SIZE ZL_STRUCT_SIZE(zl_initialize_args, extension_start)

typedef struct zl_shutdown_args {
  size_t struct_size;
  const zl_extension_base* extension_start; /* in; may be NULL */
} zl_shutdown_args;
#define ZL_SHUTDOWN_ARGS_STRUCT_SIZE ZL_STRUCT_SIZE(zl_shutdown_args, extension_start)

typedef struct zl_enumerate_args {
  size_t struct_size;
  const zl_extension_base* extension_start; /* in; may be NULL */
  /* out: the list, released with device_list_destroy. Set on success. */
  zl_device_list* devices;
} zl_enumerate_args;
#define ZL_ENUMERATE_ARGS_STRUCT_SIZE ZL_STRUCT_SIZE(zl_enumerate_args, devices)

typedef struct zl_device_state_args {
  size_t struct_size;
  const zl_extension_base* extension_start; /* in; may be NULL */
  /* in: the device, as the last enumerate reported it (index and id both;
   * the backend checks they still agree and returns ZL_ERROR_INVALID_ARGUMENT
   * when they do not). id is owned by the caller. */
  int32_t index;
  const char* id;
  /* out: the state, released with device_state_destroy. Set on success. */
  zl_device_state* state;
} zl_device_state_args;
#define ZL_DEVICE_STATE_ARGS_STRUCT_SIZE ZL_STRUCT_SIZE(zl_device_state_args, state)

/* ------------------------------------------------------------------------ */
/* The table                                                                 */

typedef struct zl_backend_api {
  size_t struct_size; /* ZL_BACKEND_API_STRUCT_SIZE */
  uint32_t abi_major; /* ZL_BACKEND_ABI_MAJOR the backend was built with */
  uint32_t abi_minor; /* ZL_BACKEND_ABI_MINOR the backend was built with */

  /* Lower-case canonical name, e.g. "cuda". Static lifetime. */
  const char* name;
  /* NULL-terminated array of extra names matched case-insensitively, e.g.
   * {"nvidia", "gpu", NULL}. May be NULL for none. Static lifetime. */
  const char* const* aliases;
  /* NULL-terminated array of environment variables that pin devices, in the
   * order the core should set them. NULL or empty when the backend has no such
   * variable. Static lifetime. */
  const char* const* visibility_env;
  /* capability_count entries; static lifetime. */
  const zl_capability* capabilities;
  size_t capability_count;
  /* torch device type the Python side uses: "cuda", "musa", "npu", "cpu".
   * Static lifetime. */
  const char* torch_device;
  /* The vendor name FlagGems expects in GEMS_VENDOR: "nvidia", "amd",
   * "mthreads", "ascend", "arm", ... NULL when the framework should detect it
   * itself. Static lifetime. */
  const char* framework_vendor;

  /* Enumerates devices now (tools are asked anew on every call). On success
   * returns NULL and stores a list in *out, which the caller releases with
   * device_list_destroy; a backend whose driver is missing still succeeds with
   * count == 0 and a reason. Returns an error only for a fault that a reason
   * cannot describe. Thread-safe. A minor-2 core calls `enumerate` below
   * instead when the backend has it. */
  zl_error* (*enumerate_devices)(zl_device_list** out);
  void (*device_list_destroy)(zl_device_list* list);
  void (*error_destroy)(zl_error* error);

  /* ---- minor 1 ---- read only when abi_minor >= 1 and the field lies within
   * struct_size (ZL_STRUCT_HAS_FIELD). */

  /* The backend's own version, recorded in every run identity. NULL when the
   * backend does not say. Static lifetime. */
  const char* backend_version;

  /* ---- minor 2 ---- read only when abi_minor >= 2 and within struct_size;
   * every entry may be NULL. */

  /* What the backend offers beyond this header. Static lifetime. */
  const zl_extension_base* extension_start;
  /* Called once per process, after the table was read and before any other
   * call; an error rejects the backend (its message is the reason). Library
   * handles (NVML, ...) are opened here, not in every enumerate. */
  zl_error* (*initialize)(zl_initialize_args* args);
  /* Called at most once, at normal exit of the process, only after a
   * successful initialize and when no call into the backend is still
   * running. No call follows it. */
  zl_error* (*shutdown)(zl_shutdown_args* args);
  /* enumerate_devices with an args struct; same rules. When set, the core
   * calls this one. */
  zl_error* (*enumerate)(zl_enumerate_args* args);
  /* The device's state now (state names above). Optional: NULL means the
   * backend cannot say, and consumers fall back to what they did before
   * (the graph timer to its probe). Thread-safe, and as fast as enumerate. */
  zl_error* (*query_device_state)(zl_device_state_args* args);
  void (*device_state_destroy)(zl_device_state* state);
} zl_backend_api;
#define ZL_BACKEND_API_STRUCT_SIZE ZL_STRUCT_SIZE(zl_backend_api, device_state_destroy)
/* The table as ABI 1.0 and 1.1 ended. */
#define ZL_BACKEND_API_STRUCT_SIZE_1_0 ZL_STRUCT_SIZE(zl_backend_api, error_destroy)
#define ZL_BACKEND_API_STRUCT_SIZE_1_1 ZL_STRUCT_SIZE(zl_backend_api, backend_version)

/* Signature of the entry point. The core passes the ABI it speaks; a backend
 * may return NULL to decline (the core reports "entry returned NULL"). The
 * returned table has static lifetime. */
typedef const zl_backend_api* (*zl_backend_get_api_fn)(uint32_t core_abi_major, uint32_t core_abi_minor);

/* Each constant reaches the struct's last member: appending a member without
 * moving its constant breaks the build here. */
#if defined(__cplusplus)
#define ZL_STATIC_ASSERT(c, m) static_assert(c, m)
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define ZL_STATIC_ASSERT(c, m) _Static_assert(c, m)
#else /* C99: a negative array size fails the build */
#define ZL_STATIC_ASSERT_CAT2(a, b) a##b
#define ZL_STATIC_ASSERT_CAT(a, b) ZL_STATIC_ASSERT_CAT2(a, b)
#define ZL_STATIC_ASSERT(c, m) typedef char ZL_STATIC_ASSERT_CAT(zl_static_assert_, __LINE__)[(c) ? 1 : -1]
#endif
ZL_STATIC_ASSERT(ZL_BACKEND_API_STRUCT_SIZE + sizeof(void*) > sizeof(zl_backend_api),
                 "ZL_BACKEND_API_STRUCT_SIZE must name zl_backend_api's last member");
ZL_STATIC_ASSERT(ZL_DEVICE_INFO_STRUCT_SIZE + sizeof(void*) > sizeof(zl_device_info),
                 "ZL_DEVICE_INFO_STRUCT_SIZE must name zl_device_info's last member");
ZL_STATIC_ASSERT(ZL_DEVICE_LIST_STRUCT_SIZE + sizeof(void*) > sizeof(zl_device_list),
                 "ZL_DEVICE_LIST_STRUCT_SIZE must name zl_device_list's last member");
ZL_STATIC_ASSERT(ZL_DEVICE_STATE_STRUCT_SIZE + sizeof(void*) > sizeof(zl_device_state),
                 "ZL_DEVICE_STATE_STRUCT_SIZE must name zl_device_state's last member");
ZL_STATIC_ASSERT(ZL_NAMED_VALUE_STRUCT_SIZE + sizeof(double) > sizeof(zl_named_value),
                 "ZL_NAMED_VALUE_STRUCT_SIZE must name zl_named_value's last member");
ZL_STATIC_ASSERT(ZL_ERROR_STRUCT_SIZE + sizeof(void*) > sizeof(zl_error),
                 "ZL_ERROR_STRUCT_SIZE must name zl_error's last member");
ZL_STATIC_ASSERT(ZL_EXTENSION_BASE_STRUCT_SIZE + sizeof(void*) > sizeof(zl_extension_base),
                 "ZL_EXTENSION_BASE_STRUCT_SIZE must name zl_extension_base's last member");
ZL_STATIC_ASSERT(ZL_ENUMERATE_ARGS_STRUCT_SIZE + sizeof(void*) > sizeof(zl_enumerate_args),
                 "ZL_ENUMERATE_ARGS_STRUCT_SIZE must name zl_enumerate_args' last member");
ZL_STATIC_ASSERT(ZL_DEVICE_STATE_ARGS_STRUCT_SIZE + sizeof(void*) > sizeof(zl_device_state_args),
                 "ZL_DEVICE_STATE_ARGS_STRUCT_SIZE must name zl_device_state_args' last member");
ZL_STATIC_ASSERT(ZL_INITIALIZE_ARGS_STRUCT_SIZE + sizeof(void*) > sizeof(zl_initialize_args),
                 "ZL_INITIALIZE_ARGS_STRUCT_SIZE must name zl_initialize_args' last member");
ZL_STATIC_ASSERT(ZL_SHUTDOWN_ARGS_STRUCT_SIZE + sizeof(void*) > sizeof(zl_shutdown_args),
                 "ZL_SHUTDOWN_ARGS_STRUCT_SIZE must name zl_shutdown_args' last member");

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ZL_BACKEND_H_ */
