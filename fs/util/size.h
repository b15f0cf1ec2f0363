// Human-readable byte sizes for command lines: "512M", "4G", "65536".
#pragma once

#include <cstdint>
#include <string>

#include "ckptfs/status.h"

namespace ckptfs {

// Binary multiples: K = 1024. Invalid names the text it could not read.
Result<uint64_t> ParseSize(const std::string& text);

}  // namespace ckptfs
