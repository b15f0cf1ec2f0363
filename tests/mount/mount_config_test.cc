// ParseMountConfig: every ckptfs -o option is taken out of the command line
// and converted, a bad value is refused naming the option, what libfuse
// handles is left for it, and nothing given means the documented defaults.
#include "mount_config.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ckptfs {
namespace {

struct Parsed {
  Status status;
  MountConfig config;
  std::vector<std::string> rest;  // what is left for fuse_parse_cmdline
};

Parsed Parse(std::vector<std::string> argv) {
  std::vector<char*> ptrs;
  for (std::string& a : argv) ptrs.push_back(a.data());
  fuse_args args = FUSE_ARGS_INIT(static_cast<int>(ptrs.size()), ptrs.data());
  Parsed p;
  p.status = ParseMountConfig(&args, &p.config);
  for (int i = 0; i < args.argc; ++i) p.rest.emplace_back(args.argv[i]);
  fuse_opt_free_args(&args);
  return p;
}

// ckptfs STORE MNT -o OPTIONS
Parsed ParseOptions(const std::string& options) {
  return Parse({"ckptfs", "/var/lib/ckpt.img", "/mnt/ckpt", "-o", options});
}

// The option is refused, and the error says which and what it got.
void ExpectRefused(const std::string& option) {
  SCOPED_TRACE(option);
  Parsed p = ParseOptions(option);
  EXPECT_EQ(p.status.code(), Status::Code::kInvalid) << p.status.ToString();
  EXPECT_NE(p.status.message().find("option " + option + ":"), std::string::npos)
      << p.status.message();
}

TEST(MountConfig, DefaultsWhenNoOptionIsGiven) {
  Parsed p = Parse({"ckptfs", "/var/lib/ckpt.img", "/mnt/ckpt"});
  ASSERT_TRUE(p.status.ok()) << p.status.ToString();
  const MountConfig& c = p.config;
  EXPECT_EQ(c.store_path, "/var/lib/ckpt.img");
  EXPECT_EQ(c.mount.memory_budget, 512ull << 20);
  EXPECT_EQ(c.mount.flusher_threads, 2u);
  EXPECT_EQ(c.mount.commit_interval_ms, 5000u);
  EXPECT_TRUE(c.mount.use_uring);
  EXPECT_EQ(c.mount.compress, "none");
  EXPECT_EQ(c.mount.compressor_threads, 2u);
  EXPECT_FALSE(c.mount.compress_backlog_raw);
  EXPECT_FALSE(c.mount.compress_when_idle);
  EXPECT_FALSE(c.mount.read_only);
  EXPECT_EQ(c.fuse.attr_timeout, 1.0);
  EXPECT_EQ(c.fuse.entry_timeout, 1.0);
  EXPECT_TRUE(c.fuse.writeback_cache);
  EXPECT_EQ(c.log_level, "info");
  EXPECT_EQ(c.log_file, "");
  EXPECT_FALSE(c.allow_nonempty);
  EXPECT_EQ(c.read_ahead_kb, 1024u);
  EXPECT_EQ(c.busy_wait_seconds, 60.0);
  EXPECT_EQ(c.fuse.uring, UringMode::kAuto);
  // The store is taken out; the mountpoint stays for libfuse.
  EXPECT_EQ(p.rest, (std::vector<std::string>{"ckptfs", "/mnt/ckpt"}));
}

TEST(MountConfig, NoStoreGivenLeavesThePathEmpty) {
  Parsed p = Parse({"ckptfs"});
  ASSERT_TRUE(p.status.ok());
  EXPECT_EQ(p.config.store_path, "");
}

TEST(MountConfig, EveryOptionIsTakenAndConverted) {
  Parsed p = ParseOptions(
      "memory=1G,flushers=4,commit_interval=250,attr_timeout=0.5,entry_timeout=30,"
      "log_level=debug,log_file=/tmp/ckptfs.log,io=posix,read_ahead_kb=4096,compress=zstd:-3,"
      "compressors=8,compress_backlog=raw,compress_when=idle,wait=2.5,no_writeback_cache,"
      "nonempty,uring=on");
  ASSERT_TRUE(p.status.ok()) << p.status.ToString();
  const MountConfig& c = p.config;
  EXPECT_EQ(c.mount.memory_budget, 1ull << 30);
  EXPECT_EQ(c.mount.flusher_threads, 4u);
  EXPECT_EQ(c.mount.commit_interval_ms, 250u);
  EXPECT_EQ(c.fuse.attr_timeout, 0.5);
  EXPECT_EQ(c.fuse.entry_timeout, 30.0);
  EXPECT_EQ(c.log_level, "debug");
  EXPECT_EQ(c.log_file, "/tmp/ckptfs.log");
  EXPECT_FALSE(c.mount.use_uring);
  EXPECT_EQ(c.read_ahead_kb, 4096u);
  EXPECT_EQ(c.mount.compress, "zstd:-3:auto");  // stored in its canonical form
  EXPECT_EQ(c.mount.compressor_threads, 8u);
  EXPECT_TRUE(c.mount.compress_backlog_raw);
  EXPECT_TRUE(c.mount.compress_when_idle);
  EXPECT_EQ(c.busy_wait_seconds, 2.5);
  EXPECT_FALSE(c.fuse.writeback_cache);
  EXPECT_TRUE(c.allow_nonempty);
  EXPECT_EQ(c.fuse.uring, UringMode::kOn);
  // Nothing of ckptfs's is left for libfuse, which would refuse it.
  EXPECT_EQ(p.rest, (std::vector<std::string>{"ckptfs", "/mnt/ckpt"}));
}

TEST(MountConfig, TheOtherValueOfEachChoice) {
  Parsed p = ParseOptions("io=uring,compress_backlog=wait,compress_when=write,compress=none,uring=off");
  ASSERT_TRUE(p.status.ok()) << p.status.ToString();
  EXPECT_TRUE(p.config.mount.use_uring);
  EXPECT_EQ(p.config.fuse.uring, UringMode::kOff);
  EXPECT_FALSE(p.config.mount.compress_backlog_raw);
  EXPECT_FALSE(p.config.mount.compress_when_idle);
  EXPECT_EQ(p.config.mount.compress, "none");
}

TEST(MountConfig, OptionsMayComeInSeveralGroups) {
  Parsed p = Parse({"ckptfs", "-o", "flushers=3", "/store", "-o", "compressors=5", "/mnt"});
  ASSERT_TRUE(p.status.ok()) << p.status.ToString();
  EXPECT_EQ(p.config.mount.flusher_threads, 3u);
  EXPECT_EQ(p.config.mount.compressor_threads, 5u);
  EXPECT_EQ(p.config.store_path, "/store");
}

// mount(8) passes the store as /proc/mounts names it when it remounts, and
// fstab lines may copy that spelling.
TEST(MountConfig, AStoreNamedAsProcMountsShowsItIsItsPath) {
  Parsed p = Parse({"ckptfs", "ckptfs:/var/lib/ckpt.img", "/mnt/ckpt"});
  ASSERT_TRUE(p.status.ok()) << p.status.ToString();
  EXPECT_EQ(p.config.store_path, "/var/lib/ckpt.img");
}

// What a remount compares with the daemon's command line, and what it
// leaves to the kernel.
TEST(MountConfig, CkptfsOptionsAreKnownByNameAndTheKernelsAreNot) {
  for (const char* name : {"memory", "flushers", "compress", "tier", "no_writeback_cache", "log_file"}) {
    EXPECT_TRUE(IsCkptfsOption(name)) << name;
  }
  for (const char* name : {"ro", "rw", "relatime", "allow_other", "nosuid", "memory=1G", "mem", ""}) {
    EXPECT_FALSE(IsCkptfsOption(name)) << name;
  }
}

TEST(MountConfig, LibfuseOptionsAndFlagsAreLeftForIt) {
  Parsed p = Parse({"ckptfs", "-f", "/store", "/mnt", "-o", "allow_other,memory=128M,default_permissions"});
  ASSERT_TRUE(p.status.ok()) << p.status.ToString();
  EXPECT_EQ(p.config.mount.memory_budget, 128ull << 20);
  EXPECT_EQ(p.rest, (std::vector<std::string>{"ckptfs", "-o", "allow_other,default_permissions",
                                              "-f", "/mnt"}));
}

// ro makes the core read-only and still goes to libfuse, which mounts with
// MS_RDONLY; the last of ro and rw wins, as in mount(8).
TEST(MountConfig, ReadOnlyIsTakenAndStillLeftForLibfuse) {
  Parsed p = ParseOptions("ro,memory=128M");
  ASSERT_TRUE(p.status.ok()) << p.status.ToString();
  EXPECT_TRUE(p.config.mount.read_only);
  EXPECT_EQ(p.config.mount.memory_budget, 128ull << 20);
  EXPECT_EQ(p.rest, (std::vector<std::string>{"ckptfs", "-o", "ro", "/mnt/ckpt"}));
  p = ParseOptions("ro,rw");
  EXPECT_FALSE(p.config.mount.read_only);
  EXPECT_EQ(p.rest, (std::vector<std::string>{"ckptfs", "-o", "ro,rw", "/mnt/ckpt"}));
  EXPECT_TRUE(ParseOptions("rw,nosuid,ro").config.mount.read_only);
  EXPECT_FALSE(ParseOptions("rw").config.mount.read_only);
}

// The atime policies are the daemon's: taken, the last one given winning,
// and not left for libfuse, which knows only noatime (the kernel flag
// /proc/mounts shows).
TEST(MountConfig, AtimePoliciesAreTakenAndTheLastOneWins) {
  Parsed p = ParseOptions(
      "relatime,norelatime,strictatime,lazytime,nolazytime,atime,diratime,nodiratime,iversion,"
      "noiversion");
  ASSERT_TRUE(p.status.ok()) << p.status.ToString();
  EXPECT_EQ(p.rest, (std::vector<std::string>{"ckptfs", "/mnt/ckpt"}));
  EXPECT_EQ(p.config.mount.atime, AtimePolicy::kStrictatime);
  EXPECT_TRUE(p.config.mount.nodiratime);
  EXPECT_EQ(ParseOptions("noatime,relatime").config.mount.atime, AtimePolicy::kRelatime);
  EXPECT_FALSE(ParseOptions("nodiratime,diratime").config.mount.nodiratime);
  Parsed no = ParseOptions("relatime,noatime");
  EXPECT_EQ(no.config.mount.atime, AtimePolicy::kNoatime);
  EXPECT_EQ(no.rest, (std::vector<std::string>{"ckptfs", "-o", "noatime", "/mnt/ckpt"}));
  EXPECT_EQ(ParseOptions("rw").config.mount.atime, AtimePolicy::kRelatime);
}

TEST(MountConfig, EveryLogLevelIsAccepted) {
  for (const char* level : {"trace", "debug", "info", "warn", "error", "critical", "off"}) {
    Parsed p = ParseOptions(std::string("log_level=") + level);
    EXPECT_TRUE(p.status.ok()) << level << ": " << p.status.ToString();
    EXPECT_EQ(p.config.log_level, level);
  }
  ExpectRefused("log_level=verbose");
  ExpectRefused("log_level=INFO");
}

TEST(MountConfig, MemoryIsASizeOfAtLeast64M) {
  EXPECT_EQ(ParseOptions("memory=64M").config.mount.memory_budget, 64ull << 20);
  EXPECT_EQ(ParseOptions("memory=2GiB").config.mount.memory_budget, 2ull << 30);
  ExpectRefused("memory=63M");
  ExpectRefused("memory=1000");
  ExpectRefused("memory=lots");
  ExpectRefused("memory=1Q");
  ExpectRefused("memory=");
  ExpectRefused("memory=-1");  // not "the largest number there is"
  ExpectRefused("memory=99999999999999999999");
}

TEST(MountConfig, CountsAreRangeChecked) {
  struct Range {
    const char* name;
    uint64_t lo, hi;
  };
  for (const Range& r : {Range{"flushers", 1, 16}, Range{"commit_interval", 10, 600000},
                         Range{"read_ahead_kb", 0, 1 << 20}, Range{"compressors", 1, 64}}) {
    const std::string name = r.name;
    SCOPED_TRACE(name);
    EXPECT_TRUE(ParseOptions(name + "=" + std::to_string(r.lo)).status.ok());
    EXPECT_TRUE(ParseOptions(name + "=" + std::to_string(r.hi)).status.ok());
    if (r.lo > 0) ExpectRefused(name + "=" + std::to_string(r.lo - 1));
    ExpectRefused(name + "=" + std::to_string(r.hi + 1));
    ExpectRefused(name + "=");
    ExpectRefused(name + "=two");
    ExpectRefused(name + "=4x");
    ExpectRefused(name + "=1.5");
    ExpectRefused(name + "=-1");
    ExpectRefused(name + "=99999999999999999999999");  // overflows
    // strtoull negates what follows a minus sign: this would read as 1.
    ExpectRefused(name + "=-18446744073709551615");
  }
  EXPECT_EQ(ParseOptions("read_ahead_kb=0").config.read_ahead_kb, 0u);  // 0: the kernel's
}

TEST(MountConfig, SecondsAreRangeChecked) {
  for (const char* name : {"attr_timeout", "entry_timeout", "wait"}) {
    const std::string n = name;
    SCOPED_TRACE(n);
    EXPECT_TRUE(ParseOptions(n + "=0").status.ok());
    EXPECT_TRUE(ParseOptions(n + "=86400").status.ok());
    EXPECT_TRUE(ParseOptions(n + "=0.25").status.ok());
    ExpectRefused(n + "=86401");
    ExpectRefused(n + "=-1");
    ExpectRefused(n + "=");
    ExpectRefused(n + "=soon");
    ExpectRefused(n + "=1s");
    ExpectRefused(n + "=inf");
    ExpectRefused(n + "=nan");  // compares false both ways: must not slip through
  }
  EXPECT_EQ(ParseOptions("attr_timeout=0").config.fuse.attr_timeout, 0.0);
  EXPECT_EQ(ParseOptions("wait=0").config.busy_wait_seconds, 0.0);
}

TEST(MountConfig, ChoicesOutsideTheirSetAreRefused) {
  ExpectRefused("io=aio");
  ExpectRefused("io=");
  ExpectRefused("compress_backlog=drop");
  ExpectRefused("compress_when=never");
  ExpectRefused("compress=lz4");
  ExpectRefused("compress=zstd:99");
  ExpectRefused("compress=zstd:3:group3");
  ExpectRefused("uring=yes");
  ExpectRefused("uring=");
}

TEST(MountConfig, ACacheIsForAMountOfAnImageOnly) {
  Parsed image = Parse({"ckptfs", "rados:ckptfs/job42", "/mnt/ckpt", "-o", "cache=/nvme/job42.cache"});
  ASSERT_TRUE(image.status.ok()) << image.status.ToString();
  EXPECT_EQ(image.config.cache, "/nvme/job42.cache");
  EXPECT_TRUE(ParseOptions("").config.cache.empty());
  Parsed local = ParseOptions("cache=/nvme/x.cache");
  EXPECT_EQ(local.status.code(), Status::Code::kInvalid);
  EXPECT_NE(local.status.message().find("local store needs no cache"), std::string::npos)
      << local.status.message();
  Parsed empty = Parse({"ckptfs", "rados:ckptfs/job42", "/mnt/ckpt", "-o", "cache="});
  EXPECT_EQ(empty.status.code(), Status::Code::kInvalid);
}

TEST(MountConfig, ReadsGoPastThePageCacheUnlessAsked) {
  Parsed image = Parse({"ckptfs", "rados:ckptfs/job42", "/mnt/ckpt"});
  ASSERT_TRUE(image.status.ok()) << image.status.ToString();
  EXPECT_EQ(image.config.fuse.direct_reads, DirectReads::kAlways);
  Parsed cached = Parse({"ckptfs", "rados:ckptfs/job42", "/mnt/ckpt", "-o", "page_cache"});
  ASSERT_TRUE(cached.status.ok()) << cached.status.ToString();
  EXPECT_EQ(cached.config.fuse.direct_reads, DirectReads::kNever);
  // A local store: large read-only opens, unless -o page_cache.
  EXPECT_EQ(ParseOptions("").config.fuse.direct_reads, DirectReads::kLargeReadOnly);
  Parsed local = ParseOptions("page_cache");
  ASSERT_TRUE(local.status.ok()) << local.status.ToString();
  EXPECT_EQ(local.config.fuse.direct_reads, DirectReads::kNever);
}

TEST(MountConfig, TheDrainsWriteSizeIsCheckedAndPassedOn) {
  EXPECT_EQ(ParseOptions("tier=rados:ckptfs/n1").config.drain_write_bytes, 0u);  // the drain's default
  Parsed set = ParseOptions("tier=rados:ckptfs/n1,drain_write=1M");
  ASSERT_TRUE(set.status.ok()) << set.status.ToString();
  EXPECT_EQ(set.config.drain_write_bytes, 1u << 20);
  EXPECT_EQ(ParseOptions("tier=rados:ckptfs/n1,drain_write=1028K").config.drain_write_bytes, 1028u << 10);
  EXPECT_EQ(ParseOptions("tier=rados:ckptfs/n1,drain_write=32M").config.drain_write_bytes, 32u << 20);
  for (const char* bad : {"drain_write=", "drain_write=64K", "drain_write=1023K", "drain_write=33M",
                          "drain_write=1049000", "drain_write=big"}) {
    Parsed p = ParseOptions(std::string("tier=rados:ckptfs/n1,") + bad);
    EXPECT_EQ(p.status.code(), Status::Code::kInvalid) << bad;
    EXPECT_NE(p.status.message().find("option drain_write="), std::string::npos) << p.status.message();
    EXPECT_NE(p.status.message().find("expected a size from 1M to 32M"), std::string::npos) << p.status.message();
  }
}

TEST(MountConfig, OptionsOfATierOrAClusterNeedOneThatUsesThem) {
  for (const char* option : {"ceph_conf=/etc/ceph/ceph.conf", "ceph_id=node1", "rados_timeout=10"}) {
    SCOPED_TRACE(option);
    Parsed p = ParseOptions(option);
    EXPECT_EQ(p.status.code(), Status::Code::kInvalid);
    const std::string name = std::string(option).substr(0, std::string(option).find('=') + 1);
    EXPECT_NE(p.status.message().find("option " + name + " says how to reach a Ceph cluster"), std::string::npos)
        << p.status.message();
    EXPECT_TRUE(ParseOptions(std::string("tier=rados:ckptfs/n1,") + option).status.ok());
    EXPECT_TRUE(Parse({"ckptfs", "rados:ckptfs/job42", "/mnt/ckpt", "-o", option}).status.ok());
  }
  for (const char* option : {"drain_write=4M", "drain_defer=0", "unmount_drain=30"}) {
    SCOPED_TRACE(option);
    Parsed p = ParseOptions(option);
    EXPECT_EQ(p.status.code(), Status::Code::kInvalid);
    EXPECT_NE(p.status.message().find("tunes the drain of -o tier=rados:POOL/NAME, which is not given"),
              std::string::npos)
        << p.status.message();
    EXPECT_TRUE(ParseOptions(std::string("tier=rados:ckptfs/n1,") + option).status.ok());
  }
  // librados takes whole seconds, and 0 would mean no timeout at all.
  for (const char* bad : {"rados_timeout=0.5", "rados_timeout=1.9", "rados_timeout=0", "rados_timeout=3601"}) {
    Parsed p = ParseOptions(std::string("tier=rados:ckptfs/n1,") + bad);
    EXPECT_EQ(p.status.code(), Status::Code::kInvalid) << bad;
    EXPECT_NE(p.status.message().find("expected whole seconds, 1 to 3600"), std::string::npos) << p.status.message();
  }
}

TEST(MountConfig, AnImageLoadsAheadOfSequentialReadersUnlessTold) {
  Parsed image = Parse({"ckptfs", "rados:ckptfs/job42", "/mnt/ckpt"});
  ASSERT_TRUE(image.status.ok()) << image.status.ToString();
  EXPECT_EQ(image.config.mount.prefetch_bytes, kImagePrefetchBytes);
  Parsed wider = Parse({"ckptfs", "rados:ckptfs/job42", "/mnt/ckpt", "-o", "prefetch=16M"});
  ASSERT_TRUE(wider.status.ok()) << wider.status.ToString();
  EXPECT_EQ(wider.config.mount.prefetch_bytes, 16u << 20);
  Parsed off = Parse({"ckptfs", "rados:ckptfs/job42", "/mnt/ckpt", "-o", "prefetch=0"});
  ASSERT_TRUE(off.status.ok()) << off.status.ToString();
  EXPECT_EQ(off.config.mount.prefetch_bytes, 0u);
  // Through the page cache the kernel reads ahead: a local store's reads,
  // and an image's with -o page_cache.
  EXPECT_EQ(Parse({"ckptfs", "rados:ckptfs/job42", "/mnt/ckpt", "-o", "page_cache"}).config.mount.prefetch_bytes, 0u);
  EXPECT_EQ(ParseOptions("").config.mount.prefetch_bytes, 0u);
  EXPECT_EQ(ParseOptions("prefetch=2M").config.mount.prefetch_bytes, 2u << 20);
  for (const char* bad : {"prefetch=lots", "prefetch=2G", "prefetch="}) {
    Parsed p = ParseOptions(bad);
    EXPECT_EQ(p.status.code(), Status::Code::kInvalid) << bad;
    EXPECT_NE(p.status.message().find("option prefetch="), std::string::npos) << p.status.message();
  }
}

TEST(MountConfig, ATierIsForALocalStoreReadWriteOrReadOnly) {
  Parsed rw = ParseOptions("tier=rados:ckptfs/node0");
  ASSERT_TRUE(rw.status.ok()) << rw.status.ToString();
  EXPECT_EQ(rw.config.tier, "rados:ckptfs/node0");
  EXPECT_FALSE(rw.config.mount.read_only);
  Parsed ro = ParseOptions("ro,tier=rados:ckptfs/node0");
  ASSERT_TRUE(ro.status.ok()) << ro.status.ToString();
  EXPECT_TRUE(ro.config.mount.read_only);
  EXPECT_EQ(ro.config.tier, "rados:ckptfs/node0");
  Parsed image = Parse({"ckptfs", "rados:ckptfs/node0", "/mnt/ckpt", "-o", "tier=rados:ckptfs/node1"});
  EXPECT_EQ(image.status.code(), Status::Code::kInvalid);
  EXPECT_NE(image.status.message().find("is for a local store"), std::string::npos) << image.status.message();
}

TEST(MountConfig, ACacheSizeBoundsTheCacheItNames) {
  Parsed bounded = Parse({"ckptfs", "rados:ckptfs/job42", "/mnt/ckpt", "-o", "cache=/nvme/c,cache_size=20G"});
  ASSERT_TRUE(bounded.status.ok()) << bounded.status.ToString();
  EXPECT_EQ(bounded.config.cache_bytes, 20ull << 30);
  EXPECT_EQ(Parse({"ckptfs", "rados:ckptfs/job42", "/mnt/ckpt", "-o", "cache=/nvme/c"}).config.cache_bytes, 0u);
  Parsed alone = Parse({"ckptfs", "rados:ckptfs/job42", "/mnt/ckpt", "-o", "cache_size=20G"});
  EXPECT_EQ(alone.status.code(), Status::Code::kInvalid);
  EXPECT_NE(alone.status.message().find("-o cache=PATH"), std::string::npos) << alone.status.message();
  for (const char* bad : {"cache=/nvme/c,cache_size=", "cache=/nvme/c,cache_size=12Q", "cache=/nvme/c,cache_size=4k"}) {
    Parsed p = Parse({"ckptfs", "rados:ckptfs/job42", "/mnt/ckpt", "-o", bad});
    EXPECT_EQ(p.status.code(), Status::Code::kInvalid) << bad;
    EXPECT_NE(p.status.message().find("cache_size="), std::string::npos) << p.status.message();
  }
}

TEST(MountConfig, TheFirstBadOptionIsReportedAndTheRestStillFreed) {
  Parsed p = ParseOptions("flushers=0,compressors=0,log_file=/tmp/x");
  ASSERT_EQ(p.status.code(), Status::Code::kInvalid);
  EXPECT_NE(p.status.message().find("flushers=0"), std::string::npos) << p.status.message();
}

TEST(MountConfig, UnknownOptionIsLeftForLibfuseToRefuse) {
  Parsed p = ParseOptions("memroy=1G");
  ASSERT_TRUE(p.status.ok());
  EXPECT_EQ(p.config.mount.memory_budget, 512ull << 20);
  EXPECT_EQ(p.rest, (std::vector<std::string>{"ckptfs", "-o", "memroy=1G", "/mnt/ckpt"}));
}

TEST(MountConfig, HelpNamesEveryOption) {
  const std::string help = MountOptionsHelp();
  for (const char* option :
       {"memory=", "flushers=", "commit_interval=", "attr_timeout=", "entry_timeout=", "io=",
        "read_ahead_kb=", "compress=", "compressors=", "compress_backlog=", "compress_when=",
        "no_writeback_cache", "log_level=", "log_file=", "nonempty", "ro", "wait=", "tier=",
        "ceph_conf=", "ceph_id=", "rados_timeout=", "unmount_drain=", "drain_defer=", "drain_write=", "cache=",
        "cache_size="}) {
    EXPECT_NE(help.find(std::string("-o ") + option), std::string::npos) << option;
  }
}

}  // namespace
}  // namespace ckptfs
