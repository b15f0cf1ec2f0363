// Opening and formatting a store on a BlockDevice that already exists, for
// tests that run the core over a MemoryDevice or a FaultInjectingDevice.
// FileSystem::Open and FileSystem::Format (include/ckptfs/filesystem.h) are
// the path-based entry points; the public header cannot name BlockDevice, so
// the device-level ones live here, inside fs/.
#pragma once

#include <memory>

#include "ckptfs/filesystem.h"
#include "ckptfs/options.h"
#include "ckptfs/status.h"
#include "io/block_device.h"

namespace ckptfs {

// Opens the store on `device`, replaying its metadata log, as FileSystem::Open
// does for a path: the same errors, and the background threads start with
// Start(). The filesystem owns the device.
Result<std::unique_ptr<FileSystem>> OpenFileSystemOnDevice(std::unique_ptr<BlockDevice> device,
                                                           const MountOptions& options);

// Formats `device` (see FormatOptions; `size` 0 means the whole device, a
// larger `size` is cut to the device). Exists when the device already holds a
// store and `force` is not set; Invalid for a bad segment size or a device
// too small for 8 segments. The superblock is the last thing written, after
// a flush, so a crash mid-format leaves no store that looks valid.
Status FormatDevice(BlockDevice* device, const FormatOptions& options);

// The checks of `options` that need no device: the segment size's bounds,
// and that a given size holds the segments a store needs.
Status ValidateFormatOptions(const FormatOptions& options);

}  // namespace ckptfs
