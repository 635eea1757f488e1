/* A minimal backend in plain C against ABI 1.2: one device with typed
 * attributes, a device-state query, no visibility variable, one capability.
 * The SDK's C kit (zl/backend_kit.h) builds what crosses the ABI in one
 * block each, so every destroy entry is one free(). */
#include <zl/backend_kit.h>

#define OOT_DEVICE_ID "OOT-0000"

static const char* const aliases[] = {"example", NULL};
static const zl_capability capabilities[] = {{"device_events", "1"}};

static zl_error* enumerate(zl_enumerate_args* args) {
  zl_named_value attributes[3];
  zl_device_info device;
  if (args == NULL || args->struct_size < ZL_ENUMERATE_ARGS_STRUCT_SIZE) {
    return zl_kit_error(ZL_ERROR_INVALID_ARGUMENT, "enumerate args are NULL or too small");
  }
  attributes[0] = zl_kit_string_value("architecture", "example-arch");
  attributes[1] = zl_kit_double_value("memory_bandwidth_peak_gbps", 100.0);
  attributes[2] = zl_kit_int_value("compute_units", 4);
  memset(&device, 0, sizeof device);
  device.index = 0;
  device.id = OOT_DEVICE_ID;
  device.name = "Out-of-tree Example Device";
  device.memory_total_bytes = 1u << 30;
  device.memory_used_bytes = -1;
  device.utilization_percent = -1;
  device.visibility_value = NULL; /* no visibility variable */
  device.attribute_count = 3;
  device.attributes = attributes;
  return zl_kit_device_list(&device, 1, "example", NULL, &args->devices);
}

/* The minor-0 form, for a core older than 1.2. */
static zl_error* enumerate_devices(zl_device_list** out) {
  zl_enumerate_args args;
  zl_error* error;
  memset(&args, 0, sizeof args);
  args.struct_size = ZL_ENUMERATE_ARGS_STRUCT_SIZE;
  error = enumerate(&args);
  if (out != NULL) *out = args.devices;
  return error;
}

static zl_error* query_state(zl_device_state_args* args) {
  zl_named_value values[2];
  if (args == NULL || args->struct_size < ZL_DEVICE_STATE_ARGS_STRUCT_SIZE) {
    return zl_kit_error(ZL_ERROR_INVALID_ARGUMENT, "state args are NULL or too small");
  }
  /* The index and the id must still name the same device (zl/backend.h). */
  if (args->index != 0 || args->id == NULL || strcmp(args->id, OOT_DEVICE_ID) != 0) {
    return zl_kit_error(ZL_ERROR_INVALID_ARGUMENT, "no device %d with that id", (int)args->index);
  }
  values[0] = zl_kit_int_value("clock_sm_mhz", 1000);
  values[1] = zl_kit_string_value("throttle_reasons", "none");
  return zl_kit_device_state(values, 2, &args->state);
}

static const zl_backend_api api = {
    ZL_BACKEND_API_STRUCT_SIZE,
    ZL_BACKEND_ABI_MAJOR,
    ZL_BACKEND_ABI_MINOR,
    "oot",
    aliases,
    NULL,
    capabilities,
    1,
    "cpu",
    NULL,
    enumerate_devices,
    zl_kit_device_list_free,
    zl_kit_error_free,
    "oot-example 1.2",
    NULL, /* extension_start: nothing beyond the header */
    NULL, /* initialize: nothing to open */
    NULL, /* shutdown */
    enumerate,
    query_state,
    zl_kit_device_state_free,
};

ZL_BACKEND_EXPORT const zl_backend_api* zl_backend_get_api(uint32_t major, uint32_t minor) {
  (void)major;
  (void)minor;
  return &api;
}
