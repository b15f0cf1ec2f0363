// mkfs.ckptfs: formats a regular file (created or grown, and allocated
// unless --sparse) or a block device as an empty ckptfs store.
#include <getopt.h>
#include <sys/statvfs.h>

#include <cstdio>
#include <string>

#include "ckptfs/filesystem.h"
#include "ckptfs/version.h"
#include "util/size.h"

namespace {

void Usage(FILE* out) {
  std::fprintf(out,
               "usage: mkfs.ckptfs [--size SIZE] [--segment-size SIZE] [--sparse] [--force] PATH\n"
               "  --size SIZE          bytes to format (K, M, G, T suffixes); a regular file\n"
               "                       is created or grown to this size. Default: all of PATH\n"
               "  --sparse             leave a regular file sparse instead of allocating it:\n"
               "                       writes then fail with ENOSPC once the filesystem under\n"
               "                       it is full\n"
               "  --segment-size SIZE  log segment size, 2M..1G in whole MiB (default 32M)\n"
               "  --force              overwrite an existing ckptfs store\n");
}

}  // namespace

int main(int argc, char** argv) {
  ckptfs::FormatOptions options;
  static const option kLong[] = {{"size", required_argument, nullptr, 's'},
                                 {"segment-size", required_argument, nullptr, 'g'},
                                 {"force", no_argument, nullptr, 'f'},
                                 {"sparse", no_argument, nullptr, 'S'},
                                 {"help", no_argument, nullptr, 'h'},
                                 {"version", no_argument, nullptr, 'V'},
                                 {nullptr, 0, nullptr, 0}};
  int c;
  while ((c = getopt_long(argc, argv, "s:g:fhV", kLong, nullptr)) != -1) {
    switch (c) {
      case 's':
      case 'g': {
        auto size = ckptfs::ParseSize(optarg);
        if (!size.ok()) {
          std::fprintf(stderr, "mkfs.ckptfs: --%s: %s\n", c == 's' ? "size" : "segment-size",
                       size.status().message().c_str());
          return 2;
        }
        (c == 's' ? options.size : options.segment_size) = *size;
        break;
      }
      case 'f': options.force = true; break;
      case 'S': options.sparse = true; break;
      case 'h': Usage(stdout); return 0;
      case 'V': std::printf("mkfs.ckptfs %s (format v1)\n", CKPTFS_VERSION); return 0;
      default: Usage(stderr); return 2;
    }
  }
  if (optind + 1 != argc) {
    Usage(stderr);
    return 2;
  }
  const std::string path = argv[optind];
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
