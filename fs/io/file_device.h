// FileDevice: a BlockDevice over a file descriptor with pread/pwrite.
#pragma once

#include <string>

#include "io/block_device.h"

namespace ckptfs {

class FileDevice : public BlockDevice {
 public:
  // Opens `path`; see OpenDevice for the error contract.
  static Result<std::unique_ptr<FileDevice>> Open(const std::string& path,
                                                  const DeviceOptions& options);
  ~FileDevice() override;
  FileDevice(const FileDevice&) = delete;
  FileDevice& operator=(const FileDevice&) = delete;

  Status Read(uint64_t offset, void* buf, size_t len) override;
  Status Write(uint64_t offset, const void* buf, size_t len) override;
  Status Flush() override;
  uint64_t size() const override { return size_; }
  Status Provision(uint64_t offset, uint64_t len) override;
  uint64_t ProvisionShortfall() const override;

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }

 private:
  FileDevice(std::string path, int fd, uint64_t size) : path_(std::move(path)), fd_(fd), size_(size) {}

  const std::string path_;
  const int fd_;
  const uint64_t size_;
};

}  // namespace ckptfs
