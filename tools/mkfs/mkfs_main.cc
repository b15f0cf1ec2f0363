// mkfs.ckptfs: formats a regular file (created or grown, and allocated
// unless --sparse) or a block device as an empty ckptfs store.
#include <sys/statvfs.h>

#include <cstdio>
#include <string>

#include "ckptfs/filesystem.h"
#include "ckptfs/version.h"
#include "common/command_line.h"

int main(int argc, char** argv) {
  ckptfs::FormatOptions options;
  std::string path;
  ckptfs::tools::ToolApp app("mkfs.ckptfs", "Formats PATH (a regular file or a block device) as an empty ckptfs store.");
  app.add_option("-s,--size", options.size,
                 "bytes to format (K, M, G, T suffixes); a regular file is created or grown to this "
                 "size. Default: all of PATH")
      ->type_name("SIZE")
      ->transform(ckptfs::tools::ByteSize());
  app.add_flag("--sparse", options.sparse,
               "leave a regular file sparse instead of allocating it: writes then fail with ENOSPC once "
               "the filesystem under it is full");
  app.add_option("-g,--segment-size", options.segment_size, "log segment size, 2M..1G in whole MiB (default 32M)")
      ->type_name("SIZE")
      ->transform(ckptfs::tools::ByteSize());
  app.add_flag("-f,--force", options.force, "overwrite an existing ckptfs store");
  app.add_option("PATH", path, "the file or block device")->required();
  app.set_version_flag("-V,--version", std::string("mkfs.ckptfs ") + CKPTFS_VERSION + " (format v1)");
  app.footer("Exit: 0 formatted, 1 could not format, 2 usage.");
  if (auto code = ckptfs::tools::ParseCommandLine(app, argc, argv, 2)) return *code;

  ckptfs::Status s = ckptfs::FileSystem::Format(path, options);
  if (!s.ok()) {
    std::fprintf(stderr, "mkfs.ckptfs: %s\n", s.ToString().c_str());
    return 1;
  }
  struct statvfs under;
  if (options.sparse && options.size > 0 && ::statvfs(path.c_str(), &under) == 0 &&
      options.size > static_cast<uint64_t>(under.f_bavail) * under.f_frsize) {
    std::fprintf(stderr,
                 "mkfs.ckptfs: warning: the sparse store is larger than the %.1f GiB free under "
                 "it; writes past that will fail with ENOSPC\n",
                 static_cast<double>(under.f_bavail) * under.f_frsize / (1ull << 30));
  }
  std::printf("mkfs.ckptfs: formatted %s\n", path.c_str());
  return 0;
}
