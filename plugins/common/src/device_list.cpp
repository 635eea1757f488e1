#include "zl_kit/device_list.hpp"

#include <cstdlib>
#include <cstring>
#include <new>

namespace zl_kit {
namespace {

// The list, its device array and every string share one allocation: the
// header struct first, then the devices, then the characters.
struct Block {
  zl_device_list list;
};

size_t string_bytes(const std::string& s) { return s.size() + 1; }

char* put(char*& cursor, const std::string& s) {
  char* at = cursor;
  std::memcpy(at, s.c_str(), s.size() + 1);
  cursor += s.size() + 1;
  return at;
}

}  // namespace

zl_device_list* make_device_list(const std::vector<Device>& devices, const std::string& source,
                                 const std::string& reason_if_empty) {
  size_t chars = string_bytes(source) + string_bytes(reason_if_empty);
  for (const Device& d : devices) {
    chars += string_bytes(d.id) + string_bytes(d.name) + string_bytes(d.visibility_value);
  }
  const size_t head = sizeof(Block);
  const size_t array = devices.size() * sizeof(zl_device_info);
  auto* raw = static_cast<char*>(std::calloc(1, head + array + chars));
  if (raw == nullptr) return nullptr;

  auto* block = new (raw) Block{};
  auto* infos = reinterpret_cast<zl_device_info*>(raw + head);
  char* cursor = raw + head + array;

  for (size_t i = 0; i < devices.size(); ++i) {
    const Device& d = devices[i];
    zl_device_info* info = new (&infos[i]) zl_device_info{};
    info->struct_size = sizeof(zl_device_info);
    info->index = d.index;
    info->id = put(cursor, d.id);
    info->name = put(cursor, d.name);
    info->memory_total_bytes = d.memory_total_bytes;
    info->memory_used_bytes = d.memory_used_bytes;
    info->utilization_percent = d.utilization_percent;
    const char* vis = put(cursor, d.visibility_value);
    info->visibility_value = d.visibility_value.empty() ? nullptr : vis;
  }
  block->list.struct_size = sizeof(zl_device_list);
  block->list.count = devices.size();
  block->list.devices = devices.empty() ? nullptr : infos;
  block->list.source = put(cursor, source);
  const char* reason = put(cursor, reason_if_empty);
  block->list.reason = devices.empty() ? reason : nullptr;
  return &block->list;
}

void destroy_device_list(zl_device_list* list) { std::free(list); }

zl_error* make_error(zl_error_code code, const std::string& message) {
  auto* raw = static_cast<char*>(std::calloc(1, sizeof(zl_error) + message.size() + 1));
  if (raw == nullptr) return nullptr;
  auto* error = new (raw) zl_error{};
  char* text = raw + sizeof(zl_error);
  std::memcpy(text, message.c_str(), message.size() + 1);
  error->struct_size = sizeof(zl_error);
  error->code = code;
  error->message = text;
  return error;
}

void destroy_error(zl_error* error) { std::free(error); }

}  // namespace zl_kit
