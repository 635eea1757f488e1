// Pure parsers for what the MUSA backend reads: mthreads-gmi's query output,
// as JSON (`mthreads-gmi -q --json`) and, for releases without --json, as the
// indented "Key : Value" text of `mthreads-gmi -q`. The default table is never
// parsed: its columns drift between releases.
//
// Visibility: MUSA_VISIBLE_DEVICES takes the device index, which mthreads-gmi
// and the MUSA runtime both count in PCI order. The UUID is the stable id but
// is not documented as accepted by MUSA_VISIBLE_DEVICES, so it is not used
// for pinning.
#pragma once

#include <string_view>

#include "zl_kit/enumeration.hpp"

namespace zl_musa {

zl_kit::ParseResult parse_gmi_json(std::string_view text);
zl_kit::ParseResult parse_gmi_query_text(std::string_view text);

}  // namespace zl_musa
