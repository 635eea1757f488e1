// Named values (device attributes, device state) as one JSON object, typed
// as the backend gave them: {"architecture": "hopper", "compute_units": 132}.
#pragma once

#include "../util/json.hpp"
#include "zlcore/named_value.hpp"

namespace zl::json {

inline Value named_values(const NamedValues& values, Alloc& a) {
  Value obj(rapidjson::kObjectType);
  for (const NamedValue& v : values) {
    Value item;
    switch (v.type) {
      case ZL_VALUE_STRING: item = str(v.text, a); break;
      case ZL_VALUE_INT64: item.SetInt64(v.integer); break;
      case ZL_VALUE_BOOL: item.SetBool(v.integer != 0); break;
      case ZL_VALUE_DOUBLE:
        if (v.number()) {
          item.SetDouble(v.real);
        }  // NaN and infinities are not JSON: null
        break;
    }
    // A name given twice keeps its last value, as capabilities do.
    if (auto it = obj.FindMember(v.name.c_str()); it != obj.MemberEnd()) {
      it->value = item;
    } else {
      obj.AddMember(str(v.name, a), item, a);
    }
  }
  return obj;
}

}  // namespace zl::json
