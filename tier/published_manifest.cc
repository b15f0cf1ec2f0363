// ReadPublishedManifest: see published_manifest.h.
#include "published_manifest.h"

namespace ckptfs {

Result<ImageManifest> ReadPublishedManifest(RadosImage* image) {
  const std::string name = image->target().ToString();
  auto data = image->ReadWhole(ImageManifest::kObject);
  if (!data.ok() && !data.status().IsNotFound()) return data.status();
  if (!data.ok() || data->empty()) {
    return Status::NotFound(name + " holds no image (no manifest): nothing was drained there yet");
  }
  auto manifest = ImageManifest::Decode(*data);
  if (!manifest.ok()) return manifest.status().WithContext(name);
  return manifest;
}

}  // namespace ckptfs
