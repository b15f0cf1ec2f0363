// ReadPublishedManifest: the manifest an image's writer last published, read
// the one way every reader of an image reads it (a mount of the image,
// fsck, `ckptfs-tier status`, the next writer).
#pragma once

#include "ckptfs/status.h"
#include "image_manifest.h"
#include "rados_image.h"

namespace ckptfs {

// NotFound when nothing was published: no manifest object, or an empty one,
// which a writer's claim creates before its first publication
// (RadosImage::Claim). Errors name the image.
Result<ImageManifest> ReadPublishedManifest(RadosImage* image);

}  // namespace ckptfs
