// FaultInjectingDevice: a BlockDevice that wraps another one and can fail,
// tear or stop its writes, and can produce the image a power cut would leave,
// so crash-consistency tests can cut a whole checkpoint burst at every write
// instead of at one lucky instant.
//
// The model is the one RocksDB's fault_injection_fs uses, at device level: a
// Write that returned reached the device's volatile cache, and only a Flush
// that returned makes it durable. Every write since the last completed Flush
// is kept as "unsynced", together with the bytes it overwrote. A power cut
// keeps everything made durable by a Flush; each unsynced write is kept,
// dropped or (since a real device may split and reorder a large write) torn
// to a 4 KiB-aligned prefix, as PowerLoss chooses.
//
// Fault schedule, counted in Write calls from the moment it is set (a call
// counts whatever its outcome):
//   FailWrite(n, err)    the nth write writes nothing and fails with err
//                        (IOError; NoSpace for ENOSPC); the device goes on.
//   TearWrite(n, kept)   the nth write stores only its first `kept` bytes
//                        (rounded down to 4 KiB), fails, and the power is off.
//   StopAfterWrites(n)   the n writes after this call succeed; then the
//                        power is off (n == 0: off now).
// With the power off every Write and Flush fails with IOError and changes
// nothing, so the state at the cut stays frozen however long the filesystem
// above keeps trying. Reads keep working (they serve what the device holds,
// unsynced writes included, as its cache would) so a dying filesystem never
// sees a read error it would not have seen anyway.
//
// Thread-safe: one mutex, mu_, held for the whole of every call, including
// the call into the wrapped device, so the write counter, the unsynced list
// and the wrapped device's contents always change together and the recorded
// order of writes is the order the wrapped device applied them. This
// serializes all I/O, which is fine for tests. The wrapped device must not be
// used by anything else while it is wrapped.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "io/block_device.h"
#include "io/memory_device.h"
#include "util/aligned_buffer.h"
#include "util/mutex.h"

namespace ckptfs {

// How a simulated power cut treats the writes that no Flush made durable.
struct PowerLoss {
  enum class Mode {
    kDropUnsynced,  // none of them reached the media
    kKeepUnsynced,  // all of them did (as if the cut came right after a flush)
    kRandom,        // each independently kept, dropped or torn (seeded)
  };
  Mode mode = Mode::kDropUnsynced;
  // kRandom only. A write is kept whole with keep_probability; otherwise it
  // is torn with tear_probability (a random 4 KiB-aligned prefix of it, at
  // least one block and less than all, reaches the media) or else dropped.
  // Writes of a single block cannot tear and are dropped instead.
  uint64_t seed = 0;
  double keep_probability = 0.5;
  double tear_probability = 0.5;

  static PowerLoss DropUnsynced() { return PowerLoss{}; }
  static PowerLoss KeepUnsynced() { return PowerLoss{Mode::kKeepUnsynced}; }
  static PowerLoss Random(uint64_t seed) { return PowerLoss{Mode::kRandom, seed}; }
};

// What PowerLossImage / SimulatePowerLoss did with the unsynced writes.
struct PowerLossReport {
  uint64_t unsynced = 0;  // writes after the last completed Flush
  uint64_t kept = 0;
  uint64_t dropped = 0;
  uint64_t torn = 0;
};

class FaultInjectingDevice : public BlockDevice {
 public:
  // Wraps `base`, which must hold the state to start from; that state counts
  // as durable.
  explicit FaultInjectingDevice(std::unique_ptr<BlockDevice> base);
  ~FaultInjectingDevice() override;
  FaultInjectingDevice(const FaultInjectingDevice&) = delete;
  FaultInjectingDevice& operator=(const FaultInjectingDevice&) = delete;

  Status Read(uint64_t offset, void* buf, size_t len) override;
  Status Write(uint64_t offset, const void* buf, size_t len) override;
  Status Flush() override;
  uint64_t size() const override { return size_; }

  // Fault schedule (see the file comment); n >= 1 for FailWrite/TearWrite.
  // Several FailWrite entries may be pending; TearWrite and StopAfterWrites
  // replace an earlier stop point.
  void FailWrite(uint64_t n, int err);
  void TearWrite(uint64_t n, size_t bytes_kept);
  void StopAfterWrites(uint64_t n);
  // Cuts the power now (StopAfterWrites(0)).
  void PowerOff() { StopAfterWrites(0); }
  // Drops every pending fault and turns the power back on; unsynced writes
  // stay unsynced.
  void ClearFaults();

  bool powered_off() const;
  // Write calls since construction, whatever their outcome.
  uint64_t writes() const;
  // Flush calls that succeeded since construction.
  uint64_t flushes() const;
  // Writes since the last completed Flush (torn ones included).
  uint64_t unsynced_writes() const;

  // The image a power cut now would leave, as a fresh MemoryDevice; this
  // device and the wrapped one are unchanged. `report` may be null.
  Result<std::unique_ptr<MemoryDevice>> PowerLossImage(const PowerLoss& how,
                                                       PowerLossReport* report = nullptr) const;
  // The same image written over `image`, which must be exactly as large as
  // this device (lets a sweep reuse one buffer instead of allocating one per
  // cut point).
  Status PowerLossImageInto(const PowerLoss& how, MemoryDevice* image,
                            PowerLossReport* report = nullptr) const;
  // Turns the wrapped device into that image in place, forgets the unsynced
  // writes and the fault schedule, and powers back on: a reboot.
  Status SimulatePowerLoss(const PowerLoss& how, PowerLossReport* report = nullptr);

  BlockDevice* base() { return base_.get(); }

 private:
  struct UnsyncedWrite {
    uint64_t offset = 0;
    size_t len = 0;           // bytes the write put on the device (torn: fewer)
    AlignedBuffer data;       // what it wrote
    AlignedBuffer overwritten;  // what was there before
  };
  struct PendingFailure {
    uint64_t at = 0;  // write number (1-based, as writes_ counts)
    int err = 0;
  };
  // Decides, for each unsynced write in order, how many of its bytes a power
  // cut leaves (0 = dropped, len = kept).
  std::vector<size_t> ChooseSurvivorsLocked(const PowerLoss& how, PowerLossReport* report) const
      REQUIRES(mu_);
  // Records and performs a write of `len` bytes.
  Status ApplyWriteLocked(uint64_t offset, const void* buf, size_t len) REQUIRES(mu_);

  const std::unique_ptr<BlockDevice> base_;
  const uint64_t size_;

  mutable Mutex mu_;  // guards everything below and all I/O to base_
  uint64_t writes_ GUARDED_BY(mu_) = 0;
  uint64_t flushes_ GUARDED_BY(mu_) = 0;
  std::vector<UnsyncedWrite> unsynced_ GUARDED_BY(mu_);
  std::vector<PendingFailure> failures_ GUARDED_BY(mu_);
  uint64_t stop_after_ GUARDED_BY(mu_) = UINT64_MAX;  // power goes off once writes_ reaches this
  uint64_t tear_at_ GUARDED_BY(mu_) = 0;              // 0: none
  size_t tear_keep_ GUARDED_BY(mu_) = 0;
  bool off_ GUARDED_BY(mu_) = false;
};

// A BlockDevice that forwards every call to `device` without owning it, for
// handing a device to a FileSystem (which takes ownership) while the test
// keeps it: `device` must outlive the returned object.
std::unique_ptr<BlockDevice> BorrowDevice(BlockDevice* device);

}  // namespace ckptfs
