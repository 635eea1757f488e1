// SHA-256 of bytes, as lower-case hex: shape files and autotune records are
// identified by content in run identities, so two runs can be compared.
#pragma once

#include <string>

namespace zl {

std::string sha256_hex(const std::string& data);

}  // namespace zl
