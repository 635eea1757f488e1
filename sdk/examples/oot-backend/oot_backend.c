/* A minimal backend in plain C: one device, no visibility variable, one
 * capability. Everything it hands out is static, so its destroy entries only
 * need to handle what enumerate allocated. */
#include <stdlib.h>

#include <zl/backend.h>

static const char* const aliases[] = {"example", NULL};
static const zl_capability capabilities[] = {{"device_events", "1"}};

static zl_error* enumerate(zl_device_list** out) {
  zl_device_list* list = calloc(1, sizeof *list);
  zl_device_info* device = calloc(1, sizeof *device);
  if (list == NULL || device == NULL) {
    free(list);
    free(device);
    return NULL;
  }
  device->struct_size = sizeof *device;
  device->index = 0;
  device->id = "OOT-0000";
  device->name = "Out-of-tree Example Device";
  device->memory_total_bytes = 1u << 30;
  device->memory_used_bytes = -1;
  device->utilization_percent = -1;
  device->visibility_value = NULL;
  list->struct_size = sizeof *list;
  list->count = 1;
  list->devices = device;
  list->reason = NULL;
  list->source = "example";
  *out = list;
  return NULL;
}

static void destroy_list(zl_device_list* list) {
  if (list == NULL) return;
  free((void*)list->devices);
  free(list);
}

static void destroy_error(zl_error* error) { free(error); }

static const zl_backend_api api = {
    sizeof(zl_backend_api), ZL_BACKEND_ABI_MAJOR, ZL_BACKEND_ABI_MINOR,
    "oot", aliases, NULL, capabilities, 1, "cpu", NULL,
    enumerate, destroy_list, destroy_error,
    "oot-example 1.0",
};

ZL_BACKEND_EXPORT const zl_backend_api* zl_backend_get_api(uint32_t major, uint32_t minor) {
  (void)major;
  (void)minor;
  return &api;
}
