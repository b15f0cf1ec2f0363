// Byte grouping, the tensor-aware filter applied before zstd.
//
// For element width w, the output holds byte 0 of every whole element, then
// byte 1 of every element, ..., then byte w-1; the len % w bytes of a
// trailing partial element follow unchanged. Ungroup is the exact inverse.
// Lengths need not be multiples of w, and a run need not start on an element
// boundary of the tensor (the grouping is relative to the run's first byte,
// which for checkpoint data is 4 KiB aligned and so element aligned).
#pragma once

#include <cstddef>

namespace ckptfs {

// out must hold len bytes and not overlap in. width >= 1.
void GroupBytes(const char* in, size_t len, unsigned width, char* out);
void UngroupBytes(const char* in, size_t len, unsigned width, char* out);

}  // namespace ckptfs
