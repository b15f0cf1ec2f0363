// RadosImage's writes against the real cluster: what a write was sent from
// stays the write's until librados lets go of it, which for a write that
// timed out comes after its completion, not with it; and an object claimed
// by one client is written whole by no other; a batch of removals answers
// for each object, and stops at its first timeout; its reads ask the OSDs
// (as their own log shows) not to cache what they read. The OSDs are frozen
// (SIGSTOP): they keep their connections and answer nothing, as a hung OSD
// does, so the client's writes fill the sockets and queue behind them.
#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "ceph_cluster.h"
#include "file_util.h"
#include "librados_image.h"
#include "rados_target.h"
#include "temp_dir.h"

namespace ckptfs {
namespace {

using testing::CephCluster;
using testing::FrozenOsds;
using testing::ReadFile;
using testing::TempDir;
using testing::WaitFor;
using testing::WriteFile;

Result<std::unique_ptr<RadosImage>> OpenImage(const std::string& image, unsigned timeout_seconds,
                                              const std::string& conf = CephCluster::Conf()) {
  CKPTFS_ASSIGN_OR_RETURN(
      RadosTarget target,
      ParseRadosSpec("rados:" + std::string(CephCluster::kPool) + "/" + image, conf, "", timeout_seconds));
  return LibradosImage::Open(target);
}

// This process's threads that librados' messengers run on.
int MessengerThreads() {
  int n = 0;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    if (ReadFile(task.path().string() + "/comm").starts_with("msgr-worker-")) ++n;
  }
  return n;
}

TEST(RadosImageTest, AWriteThatTimedOutKeepsItsBufferUntilLibradosLetsGo) {
  auto rados = OpenImage(CephCluster::UniqueImage("held"), 2);
  ASSERT_TRUE(rados.ok()) << rados.status().ToString();
  const RadosImage::WriteOnceHint hint{4 << 20, 64 << 10};
  const RadosImage::WriteAs as{RadosImage::WriteAs::Mode::kCreate, "test.owner", "test"};

  // A write that arrives: its buffer is the caller's again once it is done.
  RadosImage::SendBuffer first(4 << 20);
  std::memset(first.data(), 'a', first.size());
  ASSERT_TRUE((*rados)->StartWrite("obj.0", RadosImage::Payload(&first, first.size()), 0, hint, as)->Wait().ok());
  EXPECT_TRUE(WaitFor([&] { return !first.InUse(); }, 10)) << "librados still holds a buffer written";

  // More than the sockets to the OSDs take: some writes queue in the
  // messenger when their 2 s run out.
  constexpr int kWrites = 24;
  std::vector<RadosImage::SendBuffer> buffers;
  for (int i = 0; i < kWrites; ++i) {
    buffers.emplace_back(4 << 20);
    std::memset(buffers.back().data(), 'b' + i, buffers.back().size());
  }
  int timed_out = 0;
  int held_after_completion = 0;
  {
    FrozenOsds frozen;
    ASSERT_TRUE(frozen.frozen()) << "could not stop the OSDs of " << CephCluster::Dir();
    std::vector<std::unique_ptr<RadosImage::Op>> writes;
    for (int i = 0; i < kWrites; ++i) {
      writes.push_back((*rados)->StartWrite("obj." + std::to_string(i + 1),
                                            RadosImage::Payload(&buffers[i], buffers[i].size()), 0, hint, as));
    }
    for (auto& w : writes) {
      auto written = w->Wait();
      if (!written.ok() && written.status().ToString().find(std::strerror(ETIMEDOUT)) != std::string::npos) {
        ++timed_out;
      }
    }
    writes.clear();  // every operation is over for the caller
    for (const RadosImage::SendBuffer& b : buffers) held_after_completion += b.InUse() ? 1 : 0;
  }
  EXPECT_EQ(timed_out, kWrites) << "every write must time out while the OSDs are stopped";
  // What a caller reusing its buffer on completion would have overwritten
  // while librados was yet to send it.
  EXPECT_GT(held_after_completion, 0);
  // Running again, the OSDs take what was queued, and librados lets go.
  EXPECT_TRUE(WaitFor([&] {
    for (const RadosImage::SendBuffer& b : buffers) {
      if (b.InUse()) return false;
    }
    return true;
  }, 120, std::chrono::milliseconds(200)));
}

// A claim on an object: the owner writes it whole, and once another client
// claims it the first one writes nothing more and counts as fenced.
TEST(RadosImageTest, AnObjectIsWrittenWholeOnlyByTheOwnerItsClaimNames) {
  const std::string image = CephCluster::UniqueImage("claim");
  auto first = OpenImage(image, 30);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto second = OpenImage(image, 30);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_NE((*first)->ClientName(), (*second)->ClientName());
  const char* kOwner = "test.owner";
  ASSERT_TRUE((*first)->Claim("record", kOwner, "first").ok());
  auto claimed = (*first)->ReadWhole("record");
  ASSERT_TRUE(claimed.ok()) << claimed.status().ToString();
  EXPECT_EQ(*claimed, "");  // a claim before any write: an empty object
  ASSERT_TRUE((*first)->WriteWholeIfOwner("record", "one", kOwner, "first").ok());
  EXPECT_TRUE((*first)->CheckOwner("record", kOwner, "first").ok());

  ASSERT_TRUE((*second)->Claim("record", kOwner, "second").ok());
  Status late = (*first)->WriteWholeIfOwner("record", "two", kOwner, "first");
  EXPECT_FALSE(late.ok());
  EXPECT_NE(late.ToString().find("another writer"), std::string::npos) << late.ToString();
  EXPECT_TRUE((*first)->Fenced());
  EXPECT_FALSE((*first)->CheckOwner("record", kOwner, "first").ok());
  EXPECT_FALSE((*second)->Fenced());
  auto kept = (*second)->ReadWhole("record");
  ASSERT_TRUE(kept.ok()) << kept.status().ToString();
  EXPECT_EQ(*kept, "one") << "the refused write reached the object";
  ASSERT_TRUE((*second)->WriteWholeIfOwner("record", "three", kOwner, "second").ok());
  auto now = (*second)->ReadWhole("record");
  ASSERT_TRUE(now.ok()) << now.status().ToString();
  EXPECT_EQ(*now, "three");
}

// Segment objects carry their owner too, and each write shows it: the
// first makes the object and names its owner, a successor takes it over
// from the owner it found, and a write as the owner lands only while it is.
TEST(RadosImageTest, AnObjectIsWrittenOnlyAsItsOwnerAndMadeOrTakenOverOnce) {
  const std::string image = CephCluster::UniqueImage("owned");
  auto first = OpenImage(image, 30);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto second = OpenImage(image, 30);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  using Mode = RadosImage::WriteAs::Mode;
  const RadosImage::WriteOnceHint hint{1 << 20, 64 << 10};
  const char* kOwner = "test.owner";
  RadosImage::SendBuffer buffer(64 << 10);
  auto write = [&](RadosImage* rados, char fill, uint64_t offset, const RadosImage::WriteAs& as,
                   const std::string& oid = "seg") {
    EXPECT_TRUE(WaitFor([&] { return !buffer.InUse(); }, 10));
    std::memset(buffer.data(), fill, buffer.size());
    return rados->StartWrite(oid, RadosImage::Payload(&buffer, buffer.size()), offset, hint, as)->Wait().status();
  };
  auto bytes_at = [&](uint64_t offset) {
    std::string got(buffer.size(), '\0');
    auto n = (*second)->Read("seg", got.data(), got.size(), offset);
    EXPECT_TRUE(n.ok()) << n.status().ToString();
    return got;
  };
  const std::string a(64 << 10, 'a'), b(64 << 10, 'b'), c(64 << 10, 'c');

  ASSERT_TRUE(write(first->get(), 'a', 0, {Mode::kCreate, kOwner, "first"}).ok());
  auto owner = (*first)->Owner("seg", kOwner);
  ASSERT_TRUE(owner.ok()) << owner.status().ToString();
  EXPECT_EQ(*owner, "first");
  Status again = write(second->get(), 'b', 0, {Mode::kCreate, kOwner, "second"});
  EXPECT_EQ(again.code(), Status::Code::kExists) << again.ToString();
  EXPECT_EQ(bytes_at(0), a) << "a refused create wrote its bytes";
  EXPECT_TRUE(write(first->get(), 'a', 64 << 10, {Mode::kOwner, kOwner, "first"}).ok());

  // Taken over from the owner found: the earlier owner's writes are
  // refused from then on, and so is a takeover from an owner that was.
  ASSERT_TRUE(write(second->get(), 'b', 64 << 10, {Mode::kTakeOver, kOwner, "second", "first"}).ok());
  Status late = write(first->get(), 'c', 64 << 10, {Mode::kOwner, kOwner, "first"});
  EXPECT_EQ(late.code(), Status::Code::kExists) << late.ToString();
  EXPECT_NE(late.ToString().find("another owner"), std::string::npos) << late.ToString();
  Status stale = write(first->get(), 'c', 64 << 10, {Mode::kTakeOver, kOwner, "first", "first"});
  EXPECT_EQ(stale.code(), Status::Code::kExists) << stale.ToString();
  EXPECT_EQ(bytes_at(64 << 10), b) << "a refused write reached the object";
  // Refusals are the caller's to judge: none fences the client.
  EXPECT_FALSE((*first)->Fenced());

  // An object made before owners were named (an earlier version's) is
  // taken over from none.
  ASSERT_TRUE((*first)->WriteWhole("unnamed", "x").ok());
  owner = (*first)->Owner("unnamed", kOwner);
  ASSERT_TRUE(owner.ok()) << owner.status().ToString();
  EXPECT_EQ(*owner, "");
  EXPECT_TRUE(write(first->get(), 'a', 0, {Mode::kTakeOver, kOwner, "first", ""}, "unnamed").ok());
  EXPECT_TRUE((*first)->Owner("no-such-object", kOwner).status().IsNotFound());
  // A write as the owner, or taking over from none, makes no object that
  // is not there (its bytes go before the owner's check in the operation).
  Status missing = write(first->get(), 'a', 0, {Mode::kOwner, kOwner, "first"}, "no-such-object");
  EXPECT_FALSE(missing.ok());
  EXPECT_NE(missing.code(), Status::Code::kExists) << missing.ToString();
  EXPECT_FALSE(write(first->get(), 'a', 0, {Mode::kTakeOver, kOwner, "first", ""}, "no-such-object").ok());
  EXPECT_TRUE((*first)->Owner("no-such-object", kOwner).status().IsNotFound());

  // Removed only by the owner it names.
  Status not_its = (*first)->RemoveIfOwner("seg", kOwner, "first");
  EXPECT_EQ(not_its.code(), Status::Code::kExists) << not_its.ToString();
  EXPECT_EQ(bytes_at(0), a);
  EXPECT_TRUE((*second)->RemoveIfOwner("seg", kOwner, "second").ok());
  EXPECT_TRUE((*second)->Owner("seg", kOwner).status().IsNotFound());
  EXPECT_TRUE((*second)->RemoveIfOwner("seg", kOwner, "second").ok());  // gone already
}

// Owners and RemoveIfOwners, the batched calls a drain's garbage goes
// through: each object answered on its own, and a batch that meets an
// unreachable cluster stops there instead of timing out window after
// window.
TEST(RadosImageTest, ABatchAnswersForEachObjectAndStopsAtItsFirstTimeout) {
  const std::string image = CephCluster::UniqueImage("batch");
  const unsigned kTimeoutSeconds = 3;
  auto rados = OpenImage(image, kTimeoutSeconds);
  ASSERT_TRUE(rados.ok()) << rados.status().ToString();
  const char* kOwner = "test.owner";
  const size_t count = 3 * RadosImage::kBatchWindow + 10;
  std::vector<std::string> oids;
  for (size_t i = 0; i < count; ++i) {
    oids.push_back("obj." + std::to_string(i));
    // Every third names "me", every third another, every third none.
    Status made = i % 3 == 2 ? (*rados)->WriteWhole(oids.back(), "x")
                             : (*rados)->Claim(oids.back(), kOwner, i % 3 ? "other" : "me");
    ASSERT_TRUE(made.ok()) << made.ToString();
  }
  oids.push_back("no-such-object");
  auto owners = (*rados)->Owners(oids, kOwner);
  ASSERT_EQ(owners.size(), oids.size());
  std::vector<RadosImage::OwnedObject> mine;
  for (size_t i = 0; i < count; ++i) {
    ASSERT_TRUE(owners[i].ok()) << oids[i] << ": " << owners[i].status().ToString();
    EXPECT_EQ(*owners[i], i % 3 == 0 ? "me" : i % 3 == 1 ? "other" : "") << oids[i];
    mine.push_back({oids[i], "me"});
  }
  EXPECT_TRUE(owners.back().status().IsNotFound()) << owners.back().status().ToString();

  mine.push_back({"no-such-object", "me"});
  const std::vector<Status> removed = (*rados)->RemoveIfOwners(mine, kOwner);
  ASSERT_EQ(removed.size(), mine.size());
  for (size_t i = 0; i < count; ++i) {
    if (i % 3 == 0) {
      EXPECT_TRUE(removed[i].ok()) << oids[i] << ": " << removed[i].ToString();
    } else {
      EXPECT_EQ(removed[i].code(), Status::Code::kExists) << oids[i] << ": " << removed[i].ToString();
    }
  }
  EXPECT_TRUE(removed.back().ok()) << removed.back().ToString();  // gone already
  auto left = (*rados)->List();
  ASSERT_TRUE(left.ok()) << left.status().ToString();
  EXPECT_EQ(left->size(), count - (count + 2) / 3);
  EXPECT_FALSE((*rados)->Fenced());

  // The OSDs hung: the first window times out, and nothing after it is
  // tried.
  std::vector<RadosImage::OwnedObject> others;
  for (size_t i = 1; i < count; i += 3) others.push_back({oids[i], "other"});
  for (size_t i = 2; i < count; i += 3) others.push_back({oids[i], ""});
  ASSERT_GT(others.size(), 2 * RadosImage::kBatchWindow);
  std::vector<Status> timed_out;
  std::chrono::duration<double> took{};
  {
    FrozenOsds frozen;
    ASSERT_TRUE(frozen.frozen());
    const auto start = std::chrono::steady_clock::now();
    timed_out = (*rados)->RemoveIfOwners(others, kOwner);
    took = std::chrono::steady_clock::now() - start;
  }
  for (const Status& s : timed_out) EXPECT_FALSE(s.ok());
  EXPECT_LT(took.count(), 2.0 * kTimeoutSeconds) << "window after window timed out";
  left = (*rados)->List();
  ASSERT_TRUE(left.ok()) << left.status().ToString();
  // Those sent may land once the OSDs go on (a timeout does not undo a
  // call); those never sent stay.
  EXPECT_GE(left->size(), others.size() - RadosImage::kBatchWindow) << "removals were tried after the timeout";
}

// Ceph's three messenger threads are for servers: a client gets one for
// every two cores it may use, one to three, unless its ceph.conf chose.
TEST(RadosImageTest, AClientRunsAMessengerThreadForEveryTwoCoresUnlessItsConfigurationChose) {
  cpu_set_t cores;
  ASSERT_EQ(sched_getaffinity(0, sizeof(cores), &cores), 0);
  const int expected = std::clamp(CPU_COUNT(&cores) / 2, 1, 3);
  const int before = MessengerThreads();
  {
    auto rados = OpenImage(CephCluster::UniqueImage("msgr"), 30);
    ASSERT_TRUE(rados.ok()) << rados.status().ToString();
    EXPECT_EQ(MessengerThreads() - before, expected);
  }
  EXPECT_EQ(MessengerThreads(), before);  // each connection's own, gone with it

  TempDir dir;
  const std::string conf = dir.path() + "/ceph.conf";
  std::string text = ReadFile(CephCluster::Conf());
  const std::string section = "[client]\n";
  const size_t client = text.find(section);
  ASSERT_NE(client, std::string::npos);
  text.insert(client + section.size(), "ms async op threads = 2\n");
  ASSERT_TRUE(WriteFile(conf, text));
  auto chose = OpenImage(CephCluster::UniqueImage("msgr"), 30, conf);
  ASSERT_TRUE(chose.ok()) << chose.status().ToString();
  EXPECT_EQ(MessengerThreads() - before, 2);
}

// The OSDs' log lines of the operations they ran, at debug_osd 10, that
// name `needle`.
std::vector<std::string> OsdOpLines(const std::string& needle) {
  std::vector<std::string> lines;
  for (const auto& entry : std::filesystem::directory_iterator(CephCluster::Dir() + "/log")) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with("osd.") || !name.ends_with(".log")) continue;
    std::ifstream in(entry.path());
    for (std::string line; std::getline(in, line);) {
      if (line.find("do_osd_op ") != std::string::npos && line.find(needle) != std::string::npos) {
        lines.push_back(line);
      }
    }
  }
  return lines;
}

TEST(RadosImageTest, TheOsdsAreToldNotToCacheWhatItReads) {
  const std::string image = CephCluster::UniqueImage("nocache");
  auto rados = OpenImage(image, 30);
  ASSERT_TRUE(rados.ok()) << rados.status().ToString();
  ASSERT_TRUE((*rados)->WriteWhole("object", std::string(64 << 10, 'x')).ok());
  // The OSDs log each operation with its flags at level 10; back to their
  // configured level whatever the outcome.
  ASSERT_EQ(CephCluster::Ceph("tell 'osd.*' config set debug_osd 10"), 0);
  struct Quiet {
    ~Quiet() { CephCluster::Ceph("tell 'osd.*' config unset debug_osd"); }
  } quiet;
  // The object (in the image's namespace) and the range read, as the OSD
  // prints the operation.
  const std::string op = image + "::object:head [read 4099~12345";
  auto read = (*rados)->StartRead("object", 12345, 4099);
  auto n = read->Wait();
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, 12345u);
  // The log is written behind the operation.
  std::vector<std::string> lines;
  EXPECT_TRUE(WaitFor([&] { return !(lines = OsdOpLines(op)).empty(); }, 20))
      << "no OSD logged the read";
  for (const std::string& line : lines) EXPECT_NE(line.find("fadvise_nocache"), std::string::npos) << line;
}

}  // namespace
}  // namespace ckptfs
