// FaultInjectingDevice implementation: every write since the last Flush is
// remembered with the bytes it overwrote, so a power-cut image is the current
// contents with the unsynced writes undone (newest first) and the surviving
// ones (or their torn prefixes) applied again in issue order.
#include "io/fault_injection_device.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>

namespace ckptfs {

FaultInjectingDevice::FaultInjectingDevice(std::unique_ptr<BlockDevice> base)
    : base_(std::move(base)), size_(base_->size()) {}

FaultInjectingDevice::~FaultInjectingDevice() = default;

Status FaultInjectingDevice::Read(uint64_t offset, void* buf, size_t len) {
  MutexLock lock(&mu_);
  return base_->Read(offset, buf, len);
}

Status FaultInjectingDevice::ApplyWriteLocked(uint64_t offset, const void* buf, size_t len) {
  UnsyncedWrite w;
  w.offset = offset;
  w.len = len;
  w.overwritten = AlignedBuffer(len, /*zero=*/false);
  // Reading first also validates alignment and bounds: a write the wrapped
  // device would refuse is refused before anything changes.
  CKPTFS_RETURN_IF_ERROR(base_->Read(offset, w.overwritten.data(), len));
  CKPTFS_RETURN_IF_ERROR(base_->Write(offset, buf, len));
  w.data = AlignedBuffer(len, /*zero=*/false);
  std::memcpy(w.data.data(), buf, len);
  unsynced_.push_back(std::move(w));
  return Status::Ok();
}

Status FaultInjectingDevice::Write(uint64_t offset, const void* buf, size_t len) {
  MutexLock lock(&mu_);
  const uint64_t n = ++writes_;
  const std::string where = "write #" + std::to_string(n) + " at " + std::to_string(offset);
  if (off_) return Status::IOError(where + ": device power is off (injected)");
  auto fail = std::find_if(failures_.begin(), failures_.end(),
                           [n](const PendingFailure& f) { return f.at == n; });
  if (fail != failures_.end()) {
    int err = fail->err;
    failures_.erase(fail);
    return Status::IOError(where + " (injected)", err);
  }
  if (tear_at_ == n) {
    const size_t kept = AlignDown(std::min(tear_keep_, len), kBlockSize);
    Status s = kept > 0 ? ApplyWriteLocked(offset, buf, kept) : Status::Ok();
    off_ = true;
    tear_at_ = 0;
    if (!s.ok()) return s;
    return Status::IOError(where + ": torn after " + std::to_string(kept) +
                           " bytes, power is off (injected)");
  }
  CKPTFS_RETURN_IF_ERROR(ApplyWriteLocked(offset, buf, len));
  if (n >= stop_after_) off_ = true;
  return Status::Ok();
}

Status FaultInjectingDevice::Flush() {
  MutexLock lock(&mu_);
  if (off_) return Status::IOError("flush: device power is off (injected)");
  CKPTFS_RETURN_IF_ERROR(base_->Flush());
  unsynced_.clear();
  ++flushes_;
  return Status::Ok();
}

void FaultInjectingDevice::FailWrite(uint64_t n, int err) {
  MutexLock lock(&mu_);
  failures_.push_back(PendingFailure{writes_ + std::max<uint64_t>(n, 1), err ? err : EIO});
}

void FaultInjectingDevice::TearWrite(uint64_t n, size_t bytes_kept) {
  MutexLock lock(&mu_);
  tear_at_ = writes_ + std::max<uint64_t>(n, 1);
  tear_keep_ = bytes_kept;
  stop_after_ = UINT64_MAX;
}

void FaultInjectingDevice::StopAfterWrites(uint64_t n) {
  MutexLock lock(&mu_);
  tear_at_ = 0;
  if (n == 0) {
    off_ = true;
    stop_after_ = UINT64_MAX;
  } else {
    stop_after_ = writes_ + n;
  }
}

void FaultInjectingDevice::ClearFaults() {
  MutexLock lock(&mu_);
  failures_.clear();
  tear_at_ = 0;
  stop_after_ = UINT64_MAX;
  off_ = false;
}

bool FaultInjectingDevice::powered_off() const {
  MutexLock lock(&mu_);
  return off_;
}

uint64_t FaultInjectingDevice::writes() const {
  MutexLock lock(&mu_);
  return writes_;
}

uint64_t FaultInjectingDevice::flushes() const {
  MutexLock lock(&mu_);
  return flushes_;
}

uint64_t FaultInjectingDevice::unsynced_writes() const {
  MutexLock lock(&mu_);
  return unsynced_.size();
}

std::vector<size_t> FaultInjectingDevice::ChooseSurvivorsLocked(const PowerLoss& how,
                                                                PowerLossReport* report) const {
  std::vector<size_t> keep(unsynced_.size(), 0);
  std::mt19937_64 rng(how.seed);
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  PowerLossReport r;
  r.unsynced = unsynced_.size();
  for (size_t i = 0; i < unsynced_.size(); ++i) {
    const size_t len = unsynced_[i].len;
    switch (how.mode) {
      case PowerLoss::Mode::kDropUnsynced: keep[i] = 0; break;
      case PowerLoss::Mode::kKeepUnsynced: keep[i] = len; break;
      case PowerLoss::Mode::kRandom: {
        const size_t blocks = len / kBlockSize;
        if (coin(rng) < how.keep_probability) {
          keep[i] = len;
        } else if (blocks > 1 && coin(rng) < how.tear_probability) {
          keep[i] = (1 + rng() % (blocks - 1)) * kBlockSize;
        } else {
          keep[i] = 0;
        }
        break;
      }
    }
    if (keep[i] == len) ++r.kept;
    else if (keep[i] == 0) ++r.dropped;
    else ++r.torn;
  }
  if (report) *report = r;
  return keep;
}

Result<std::unique_ptr<MemoryDevice>> FaultInjectingDevice::PowerLossImage(
    const PowerLoss& how, PowerLossReport* report) const {
  auto image = std::make_unique<MemoryDevice>(size_);
  CKPTFS_RETURN_IF_ERROR(PowerLossImageInto(how, image.get(), report));
  return image;
}

Status FaultInjectingDevice::PowerLossImageInto(const PowerLoss& how, MemoryDevice* image,
                                                PowerLossReport* report) const {
  MutexLock lock(&mu_);
  if (image->size() != size_) {
    return Status::Invalid("power-loss image of " + std::to_string(size_) +
                           " bytes into a device of " + std::to_string(image->size()));
  }
  char* bytes = image->bytes().data();
  constexpr size_t kChunk = 4 << 20;
  AlignedBuffer staging(kChunk, /*zero=*/false);
  for (uint64_t off = 0; off < size_; off += kChunk) {
    const size_t len = static_cast<size_t>(std::min<uint64_t>(kChunk, size_ - off));
    CKPTFS_RETURN_IF_ERROR(base_->Read(off, staging.data(), len));
    std::memcpy(bytes + off, staging.data(), len);
  }
  const std::vector<size_t> keep = ChooseSurvivorsLocked(how, report);
  for (size_t i = unsynced_.size(); i-- > 0;) {
    const UnsyncedWrite& w = unsynced_[i];
    std::memcpy(bytes + w.offset, w.overwritten.data(), w.len);
  }
  for (size_t i = 0; i < unsynced_.size(); ++i) {
    if (keep[i] > 0) std::memcpy(bytes + unsynced_[i].offset, unsynced_[i].data.data(), keep[i]);
  }
  return Status::Ok();
}

Status FaultInjectingDevice::SimulatePowerLoss(const PowerLoss& how, PowerLossReport* report) {
  MutexLock lock(&mu_);
  const std::vector<size_t> keep = ChooseSurvivorsLocked(how, report);
  for (size_t i = unsynced_.size(); i-- > 0;) {
    const UnsyncedWrite& w = unsynced_[i];
    CKPTFS_RETURN_IF_ERROR(base_->Write(w.offset, w.overwritten.data(), w.len));
  }
  for (size_t i = 0; i < unsynced_.size(); ++i) {
    if (keep[i] > 0) {
      CKPTFS_RETURN_IF_ERROR(base_->Write(unsynced_[i].offset, unsynced_[i].data.data(), keep[i]));
    }
  }
  CKPTFS_RETURN_IF_ERROR(base_->Flush());
  unsynced_.clear();
  failures_.clear();
  tear_at_ = 0;
  stop_after_ = UINT64_MAX;
  off_ = false;
  return Status::Ok();
}

namespace {

class BorrowedDevice : public BlockDevice {
 public:
  explicit BorrowedDevice(BlockDevice* device) : device_(device) {}
  Status Read(uint64_t offset, void* buf, size_t len) override {
    return device_->Read(offset, buf, len);
  }
  Status Write(uint64_t offset, const void* buf, size_t len) override {
    return device_->Write(offset, buf, len);
  }
  Status Flush() override { return device_->Flush(); }
  uint64_t size() const override { return device_->size(); }

 private:
  BlockDevice* const device_;
};

}  // namespace

std::unique_ptr<BlockDevice> BorrowDevice(BlockDevice* device) {
  return std::make_unique<BorrowedDevice>(device);
}

}  // namespace ckptfs
