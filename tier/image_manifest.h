// ImageManifest: the object that makes a set of RADOS objects an image of a
// ckptfs store at one commit. docs/format.md ("Remote image") documents the
// same bytes; tests/tier/image_manifest_test.cc pins them.
//
// Objects of an image (all in the RADOS namespace named after the image):
//   "manifest"             this record, replaced whole (write_full, atomic),
//                          only by the writer its xattr "ckptfs.owner" names;
//                          empty when a writer has claimed the image and not
//                          yet published (read as no image)
//   "seg.S.N"              bytes of local segment S in one incarnation; N is
//                          unique within the image and never reused, so an
//                          object, once the manifest names it, only ever gains
//                          bytes outside the chunks the manifest lists
//   "lock"                 holds the writer's RADOS lock (no data)
//
// Layout, little-endian:
//   magic[8] "CKPTIMG\n", version u32 (2; 1 when the evicted list is empty,
//   which is then left out), flags u32 (0),
//   store_id u64, publish_seq u64, commit_lsn u64, published_ns i64,
//   next_object_id u64,
//   superblock: 4096 bytes (the local store's superblock block at the commit)
//   entry_count u32, then per entry (sorted by segment):
//     segment u32, object_id u64, chunk_count u32,
//     chunk_count x (offset u32, length u32, crc u32)   offsets within the segment
//   evicted_count u32, then as many entries of the same shape (sorted by
//     object_id; version 2 only): objects of segment incarnations the store
//     no longer holds locally, whose runs its log points at by remote
//     address (format/physical_extent.h, RemoteTier)
//   crc u32: CRC32C of everything before it.
// Version 1 (no evicted section) is still read. A device read of the image
// (RadosImageDevice) serves the superblock for both superblock copies, each
// listed chunk from its object, remote addresses from the object they name,
// and zeros everywhere else.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ckptfs/status.h"

namespace ckptfs {

struct ImageChunk {
  uint32_t offset = 0;  // within the segment
  uint32_t length = 0;
  uint32_t crc = 0;     // CRC32C of the chunk's bytes
  bool operator==(const ImageChunk&) const = default;
};

struct ImageSegment {
  uint32_t segment = 0;
  uint64_t object_id = 0;
  std::vector<ImageChunk> chunks;  // sorted by offset, disjoint
  bool operator==(const ImageSegment&) const = default;
};

struct ImageManifest {
  static constexpr uint32_t kVersion = 2;
  static constexpr const char* kObject = "manifest";
  static constexpr const char* kLockObject = "lock";
  static constexpr const char* kLockName = "ckptfs.writer";  // the writer's exclusive lock
  // The xattr naming the writer ("store-ID/client.N") of the manifest and
  // of each segment object: a manifest is published, and a segment object
  // written, only while it names the writer (RadosImage::WriteAs).
  static constexpr const char* kOwnerXattr = "ckptfs.owner";

  uint64_t store_id = 0;
  uint64_t publish_seq = 0;  // manifests published before this one, plus one
  uint64_t commit_lsn = 0;   // lsn of the local store's last log block in the image
  int64_t published_ns = 0;
  uint64_t next_object_id = 1;
  std::string superblock;  // 4096 bytes
  std::vector<ImageSegment> segments;  // sorted by segment
  std::vector<ImageSegment> evicted;   // sorted by object_id

  std::string Encode() const;
  // Invalid when `data` is not a manifest at all, NotSupported for another
  // version, Corruption for a damaged one; each says which.
  static Result<ImageManifest> Decode(const std::string& data);

  static std::string ObjectName(uint32_t segment, uint64_t object_id);
  // The object id in a segment object's name (ObjectName); nullopt for
  // any other name (the manifest, the lock object, another's).
  static std::optional<uint64_t> ObjectIdOf(const std::string& name);
  // The entry of local segment `segment`, or null.
  const ImageSegment* Find(uint32_t segment) const;
  // The entry, in either list, of object `object_id`, or null.
  const ImageSegment* FindObject(uint64_t object_id) const;
  // The chunks of both lists: how many (the manifest grows with them),
  // their bytes and the longest.
  struct ChunkTally {
    size_t count = 0;
    uint64_t bytes = 0;
    uint64_t largest = 0;
  };
  ChunkTally TallyChunks() const;
  uint64_t StoredBytes() const { return TallyChunks().bytes; }
};

}  // namespace ckptfs
