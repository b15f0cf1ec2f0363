// RemoveImage: see image_removal.h.
#include "image_removal.h"

#include <string>
#include <vector>

#include "image_manifest.h"
#include "published_manifest.h"

namespace ckptfs {
namespace {

// The writer lock's cookie while an image is removed: no store's (a
// writer breaks only locks its own store's cookie names).
constexpr const char* kRemovalCookie = "removal";

// Listings made while removing: the first, then one more should an old
// writer have made objects meanwhile.
constexpr int kListings = 2;

bool IsImageObject(const std::string& oid) {
  return oid == ImageManifest::kObject || oid == ImageManifest::kLockObject ||
         ImageManifest::ObjectIdOf(oid).has_value();
}

std::string FirstFailure(const std::vector<Status>& statuses) {
  for (const Status& s : statuses) {
    if (!s.ok()) return s.ToString();
  }
  return "";
}

// Invalid when `names`, the objects in the image's namespace, include one
// ckptfs does not make.
Status CheckOnlyImageObjects(const std::string& what, const std::vector<std::string>& names) {
  std::vector<std::string> foreign;
  for (const std::string& oid : names) {
    if (!IsImageObject(oid)) foreign.push_back(oid);
  }
  if (foreign.empty()) return Status::Ok();
  return Status::Invalid(what + " holds " + std::to_string(foreign.size()) + " object(s) ckptfs does not make (" +
                         foreign.front() + (foreign.size() > 1 ? ", ..." : "") +
                         "): not an image of ckptfs, nothing removed");
}

// Invalid when the published manifest lists evicted runs, or does not
// decode; ok when there is none.
Status CheckNoEvictedRuns(RadosImage* image) {
  const std::string what = image->target().ToString();
  Result<ImageManifest> manifest = ReadPublishedManifest(image);
  if (manifest.ok() && !manifest->evicted.empty()) {
    return Status::Invalid(what + " holds " + std::to_string(manifest->evicted.size()) +
                           " object(s) of runs its store evicted, which that store reads from the image alone: "
                           "nothing removed (--force removes them anyway)");
  }
  if (manifest.ok() || manifest.status().IsNotFound()) return Status::Ok();
  if (manifest.status().IsIOError()) return manifest.status();  // the cluster, not the image
  return Status::Invalid(manifest.status().ToString() +
                         ": whether its store evicted runs to it is unknown; nothing removed (--force removes it "
                         "anyway)");
}

}  // namespace

Result<RemovedImage> RemoveImage(RadosImage* image, bool force) {
  const std::string what = image->target().ToString();
  auto busy = [&](const RadosImage::Locker& writer) {
    return Status::Busy(what + " has a writer, " + writer.client + " at " + writer.address +
                        ": unmount it first, or if it is dead, `ckptfs-tier takeover " + what + "`");
  };
  CKPTFS_ASSIGN_OR_RETURN(std::vector<std::string> names, image->List());
  if (names.empty()) return Status::NotFound(what + " holds no objects");
  // Before the lock is taken: taking it makes the lock object, which a
  // foreign namespace must not get.
  CKPTFS_RETURN_IF_ERROR(CheckOnlyImageObjects(what, names));
  Status locked = image->Lock(ImageManifest::kLockObject, ImageManifest::kLockName, kRemovalCookie,
                              "ckptfs-tier remove");
  if (locked.IsBusy()) {  // a writer's, who may have let go since
    CKPTFS_ASSIGN_OR_RETURN(auto writers, image->Lockers(ImageManifest::kLockObject, ImageManifest::kLockName));
    if (!writers.empty()) return busy(writers.front());
  }
  CKPTFS_RETURN_IF_ERROR(locked);
  RemovedImage removed;
  auto fail = [&](const Status& s) {
    (void)image->Unlock(ImageManifest::kLockObject, ImageManifest::kLockName, kRemovalCookie);
    return s;
  };
  // Under the lock: a writer that let go just before published its last
  // manifest, which may list runs it evicted since a look before the lock.
  if (!force) {
    if (Status s = CheckNoEvictedRuns(image); !s.ok()) return fail(s);
  }
  for (int listing = 0; listing < kListings; ++listing) {
    if (listing > 0) {
      Result<std::vector<std::string>> again = image->List();
      if (!again.ok()) return fail(again.status());
      names = std::move(*again);
    }
    std::vector<std::string> segments;
    for (const std::string& oid : names) {
      if (oid == ImageManifest::kObject) {
        // First: from here on a mount finds the image never drained.
        if (Status s = image->Remove(oid); !s.ok()) return fail(s);
        ++removed.objects;
      } else if (ImageManifest::ObjectIdOf(oid)) {
        segments.push_back(oid);
      }
    }
    const std::vector<Status> statuses = image->RemoveEach(segments);
    if (std::string failure = FirstFailure(statuses); !failure.empty()) {
      return fail(Status::IOError(what + ": removing its segment objects: " + failure +
                                  " (what is left stays for the next removal)"));
    }
    removed.objects += segments.size();
    removed.segments += segments.size();
  }
  // Last, and with it the lock.
  if (Status s = image->Remove(ImageManifest::kLockObject); !s.ok()) return fail(s);
  ++removed.objects;
  return removed;
}

}  // namespace ckptfs
