// EvictedRunReader: see evicted_run_reader.h.
#include "evicted_run_reader.h"

#include <string>

#include "format/physical_extent.h"
#include "librados_image.h"

namespace ckptfs {

Result<std::unique_ptr<EvictedRunReader>> EvictedRunReader::Open(const RadosTarget& target, uint64_t store_id) {
  CKPTFS_ASSIGN_OR_RETURN(auto rados, LibradosImage::Open(target));
  CKPTFS_ASSIGN_OR_RETURN(auto image, RadosImageDevice::Open(std::move(rados)));
  if (image->store_id() != store_id) {
    return Status::Invalid(target.ToString() + " is the image of another store (store id " +
                           std::to_string(image->store_id()) + ", this one's is " + std::to_string(store_id) + ")");
  }
  return std::unique_ptr<EvictedRunReader>(new EvictedRunReader(std::move(image)));
}

Status EvictedRunReader::ReadRemote(uint64_t object, uint64_t offset, void* buf, size_t len) {
  return image_->Read(PhysicalExtent::RemoteAddress(object, offset), buf, len);
}

}  // namespace ckptfs
