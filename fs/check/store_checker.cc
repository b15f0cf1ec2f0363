// StoreChecker implementation.
#include "check/store_checker.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "ckptfs/filesystem.h"
#include "format/superblock.h"
#include "journal/replay.h"
#include "meta/namespace.h"
#include "segment/segment_table.h"
#include "compress/extent_codec.h"
#include "util/aligned_buffer.h"
#include "util/crc32c.h"

namespace ckptfs {
namespace {

// Walks the tree from the root: counts names per inode and remembers a path.
void WalkTree(const Namespace& ns, std::unordered_map<uint64_t, uint32_t>* names,
              std::unordered_map<uint64_t, std::string>* paths, CheckReport* report) {
  std::vector<std::pair<uint64_t, std::string>> stack = {{kRootIno, ""}};
  (*paths)[kRootIno] = "/";
  while (!stack.empty()) {
    auto [ino, path] = stack.back();
    stack.pop_back();
    const Inode* dir = ns.Find(ino);
    uint32_t subdirs = 0;
    for (const auto& [name, entry] : dir->entries) {
      const Inode* child = ns.Find(entry.ino);
      std::string child_path = path + "/" + name;
      if (!child) {
        report->errors.push_back("dangling entry " + child_path + " -> inode " +
                                 std::to_string(entry.ino));
        continue;
      }
      (*names)[entry.ino] += 1;
      paths->emplace(entry.ino, child_path);
      if (child->is_dir()) {
        ++subdirs;
        if (child->parent != ino) {
          report->errors.push_back("directory " + child_path + " has parent " +
                                   std::to_string(child->parent) + ", listed in " +
                                   std::to_string(ino));
        }
        stack.emplace_back(entry.ino, child_path);
      }
    }
    if (dir->nlink != 2 + subdirs) {
      report->errors.push_back("directory " + (path.empty() ? "/" : path) + " has link count " +
                               std::to_string(dir->nlink) + ", expected " +
                               std::to_string(2 + subdirs));
    }
  }
}

struct RunUse {
  uint64_t ino;
  uint64_t file_offset;
  uint64_t length;
};
struct Run {
  PhysicalExtent phys;
  std::vector<RunUse> uses;
};

void CheckRuns(BlockDevice* device, const Superblock& sb, const Namespace& ns,
               const std::vector<uint32_t>& meta_segments,
               const std::unordered_map<uint64_t, std::string>& paths, CheckReport* report) {
  std::map<uint64_t, Run> runs;  // by address
  for (const auto& [ino, node] : ns.inodes()) {
    for (const auto& [offset, extent] : node->extents.entries()) {
      if (extent.phys.reserved()) continue;  // fallocated space: no stored bytes
      Run& run = runs[extent.phys.addr];
      if (!run.uses.empty() && !(run.phys == extent.phys)) {
        report->errors.push_back("two different stored runs claim address " +
                                 std::to_string(extent.phys.addr));
      }
      run.phys = extent.phys;
      run.uses.push_back({ino, offset, extent.length});
    }
  }
  std::vector<bool> is_meta(sb.segment_count, false);
  for (uint32_t s : meta_segments) is_meta[s] = true;

  std::map<uint64_t, DamagedFile> damaged;
  AlignedBuffer buf(1 << 20, /*zero=*/false);
  std::vector<char> decoded;
  uint64_t prev_end = 0;
  for (const auto& [addr, run] : runs) {
    const uint64_t stored = AlignUp(run.phys.length, kBlockSize);
    ++report->stored_runs;
    report->stored_bytes += run.phys.length;
    if (run.phys.remote()) {
      ++report->remote_runs;
      report->remote_bytes += run.phys.length;
      if (!device->ServesRemoteRuns()) {
        ++report->remote_unchecked;
        continue;
      }
    } else if (const uint32_t segment =
                   static_cast<uint32_t>((addr - sb.data_start) / sb.segment_size);
               is_meta[segment]) {
      report->errors.push_back("stored run at " + std::to_string(addr) +
                               " lies in metadata segment " + std::to_string(segment));
    }
    if (addr < prev_end) {
      report->errors.push_back("stored runs overlap at device address " + std::to_string(addr));
    }
    prev_end = addr + stored;
    bool bad = stored > buf.size();
    if (!bad) {
      Status s = device->Read(addr, buf.data(), stored);
      bad = !s.ok() || crc32c::Value(buf.data(), run.phys.length) != run.phys.crc;
      // A compressed run must also decode to exactly the length its record
      // claims (a sound checksum over a frame the codec rejects is a bug).
      if (!bad && run.phys.compressed()) {
        decoded.resize(run.phys.raw_length);
        bad = !DecodeRun(static_cast<Codec>(run.phys.codec), buf.data(), run.phys.length,
                         decoded.data(), decoded.size())
                   .ok();
        if (!bad) ++report->compressed_runs;
      }
    }
    if (!bad) continue;
    for (const RunUse& use : run.uses) {
      DamagedFile& f = damaged[use.ino];
      f.ino = use.ino;
      auto p = paths.find(use.ino);
      f.path = p != paths.end() ? p->second : "<inode " + std::to_string(use.ino) + ">";
      f.ranges.push_back({use.file_offset, use.length});
      report->errors.push_back("checksum mismatch: " + f.path + " bytes " +
                               std::to_string(use.file_offset) + ".." +
                               std::to_string(use.file_offset + use.length) +
                               " (stored at device offset " + std::to_string(addr) + ")");
    }
  }
  if (report->remote_unchecked > 0) {
    report->warnings.push_back(
        std::to_string(report->remote_unchecked) +
        " stored run(s) were evicted to the store's RADOS tier and are not checked here; "
        "check them in the image: ckptfs-fsck rados:POOL/NAME");
  }
  for (auto& [ino, f] : damaged) {
    std::sort(f.ranges.begin(), f.ranges.end(),
              [](const DamagedRange& a, const DamagedRange& b) { return a.offset < b.offset; });
    report->damaged_files.push_back(std::move(f));
  }
}

}  // namespace

Result<CheckReport> CheckStore(BlockDevice* device) {
  CheckReport report;
  AlignedBuffer block(kBlockSize);
  for (int copy = 0; copy < 2; ++copy) {
    CKPTFS_RETURN_IF_ERROR(device->Read(kSuperblockOffsets[copy], block.data(), kBlockSize));
    auto sb = Superblock::Decode(block.data());
    if (!sb.ok()) {
      report.superblock_copy_bad[copy] = true;
      report.errors.push_back(std::string("superblock copy ") + (copy == 0 ? "A" : "B") + ": " +
                              sb.status().ToString());
    }
  }
  CKPTFS_ASSIGN_OR_RETURN(Superblock sb, ReadSuperblock(device));

  SegmentTable segments(sb);
  Namespace ns(&segments);
  // The mount's own replay, so fsck sees exactly the tree a mount would.
  auto replay = ReplayStore(device, sb, &ns, &segments);
  if (!replay.ok()) {
    report.log_damaged = true;
    report.errors.push_back("metadata log: " + replay.status().ToString());
    return report;
  }
  report.log_blocks = replay->blocks;
  report.log_records = replay->records;
  if (!replay->damage.empty()) {
    report.log_damaged = true;
    report.errors.push_back(replay->damage);
  }
  if (!ns.Find(kRootIno)) {
    report.errors.push_back("no root directory");
    return report;
  }

  std::unordered_map<uint64_t, uint32_t> names;
  std::unordered_map<uint64_t, std::string> paths;
  WalkTree(ns, &names, &paths, &report);
  for (const auto& [ino, node] : ns.inodes()) {
    ++report.inodes;
    if (node->is_regular()) {
      ++report.files;
      report.file_bytes += node->size;
    } else if (node->is_dir()) {
      ++report.directories;
    } else if (node->is_symlink()) {
      ++report.symlinks;
    }
    if (ino == kRootIno) continue;
    if (node->nlink == 0) {
      ++report.orphans;  // unlinked while open at a crash; a read-write mount frees it
      continue;
    }
    uint32_t found = names.count(ino) ? names[ino] : 0;
    if (found == 0) {
      report.errors.push_back("inode " + std::to_string(ino) + " has links but no name");
    } else if (!node->is_dir() && found != node->nlink) {
      report.errors.push_back(paths[ino] + " has link count " + std::to_string(node->nlink) +
                              ", found " + std::to_string(found) + " names");
    }
  }
  if (report.orphans > 0) {
    report.warnings.push_back(
        std::to_string(report.orphans) +
        " unlinked inode(s) await freeing (the next read-write mount frees them)");
  }
  CheckRuns(device, sb, ns, replay->segments, paths, &report);

  SegmentUsage usage = segments.Usage();
  report.segments_total = usage.total;
  report.segments_data = usage.data;
  report.segments_meta = usage.meta;
  report.segments_free = usage.free;
  if (usage.live_file_bytes + usage.remote_file_bytes != [&] {
        uint64_t mapped = 0;
        for (const auto& [ino, node] : ns.inodes()) mapped += node->extents.mapped_bytes();
        return mapped;
      }()) {
    report.errors.push_back("segment live bytes disagree with the files' extents");
  }
  return report;
}

Result<std::vector<std::string>> RepairStore(const std::string& path, const CheckReport& report) {
  std::vector<std::string> done;
  if (report.log_damaged) {
    return Status::Corruption(
        "the metadata log is damaged; changes after the damage cannot be recovered. Copy the "
        "store aside before anything else");
  }
  if (report.superblock_copy_bad[0] != report.superblock_copy_bad[1]) {
    DeviceOptions options;
    options.use_uring = false;
    CKPTFS_ASSIGN_OR_RETURN(auto device, OpenDevice(path, options));
    CKPTFS_ASSIGN_OR_RETURN(Superblock sb, ReadSuperblock(device.get()));
    sb.generation += 1;
    CKPTFS_RETURN_IF_ERROR(WriteSuperblock(device.get(), sb));
    done.push_back(std::string("rewrote superblock copy ") +
                   (report.superblock_copy_bad[0] ? "A" : "B") + " from the good copy");
  }
  if (report.damaged_files.empty()) return done;

  MountOptions options;
  CKPTFS_ASSIGN_OR_RETURN(auto fs, FileSystem::Open(path, options));
  fs->Start();
  uint64_t lost_found;
  auto existing = fs->Lookup(kRootIno, "lost+found");
  if (existing.ok()) {
    lost_found = existing->st_ino;
  } else {
    CKPTFS_ASSIGN_OR_RETURN(auto made, fs->Mkdir(kRootIno, "lost+found", 0700, 0, 0));
    lost_found = made.st_ino;
  }
  for (const DamagedFile& f : report.damaged_files) {
    std::string ranges;
    for (const DamagedRange& r : f.ranges) {
      std::string zeros(r.length, '\0');
      CKPTFS_RETURN_IF_ERROR(fs->Write(f.ino, r.offset, zeros.data(), zeros.size()).status());
      if (!ranges.empty()) ranges += ",";
      ranges += std::to_string(r.offset) + "+" + std::to_string(r.length);
    }
    CKPTFS_RETURN_IF_ERROR(fs->SetXattr(f.ino, "user.ckptfs.damaged", ranges, 0));
    std::string name = std::to_string(f.ino);
    if (!fs->Lookup(lost_found, name).ok()) {
      CKPTFS_RETURN_IF_ERROR(fs->Link(f.ino, lost_found, name).status());
    }
    done.push_back(f.path + ": damaged bytes " + ranges +
                   " replaced by zeros; listed in xattr user.ckptfs.damaged; linked as "
                   "/lost+found/" + name);
  }
  CKPTFS_RETURN_IF_ERROR(fs->Close());
  return done;
}

}  // namespace ckptfs
