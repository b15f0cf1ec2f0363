// Namespace::Apply refuses records that would break the tree, as only a
// damaged or forged log could contain: directory cycles and second names.
// Readdir positions follow the names.
#include "meta/namespace.h"

#include <gtest/gtest.h>

#include "meta/dir_cookie.h"

namespace ckptfs {
namespace {

class NullObserver : public SpaceObserver {
 public:
  void Referenced(const PhysicalExtent&, uint32_t, uint64_t) override {}
  void Released(const PhysicalExtent&, uint32_t, uint64_t) override {}
};

class NamespaceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(ns_.Apply(record::CreateInode{1, S_IFDIR | 0755, 0, 0, 0, 1, ""}).ok());
    ASSERT_TRUE(ns_.Apply(record::CreateInode{2, S_IFDIR | 0755, 0, 0, 0, 1, ""}).ok());
    ASSERT_TRUE(ns_.Apply(record::Link{1, "a", 2, 1}).ok());
    ASSERT_TRUE(ns_.Apply(record::CreateInode{3, S_IFDIR | 0755, 0, 0, 0, 1, ""}).ok());
    ASSERT_TRUE(ns_.Apply(record::Link{2, "b", 3, 1}).ok());
  }
  NullObserver space_;
  Namespace ns_{&space_};
};

TEST_F(NamespaceTest, LinkingADirectoryUnderItselfIsCorruption) {
  EXPECT_TRUE(ns_.Apply(record::Link{3, "loop", 2, 2}).IsCorruption());
  EXPECT_TRUE(ns_.Apply(record::Link{2, "self", 2, 2}).IsCorruption());
}

TEST_F(NamespaceTest, SecondNameForADirectoryIsCorruption) {
  EXPECT_TRUE(ns_.Apply(record::Link{1, "again", 3, 2}).IsCorruption());
}

TEST_F(NamespaceTest, RenameIntoOwnDescendantIsCorruption) {
  EXPECT_TRUE(ns_.Apply(record::Rename{1, "a", 3, "x", 0, 2}).IsCorruption());
  EXPECT_TRUE(ns_.IsAncestor(2, 3));
  EXPECT_EQ(ns_.PathOf(3), "/a/b");
}

uint64_t CookieOf(const Namespace& ns, uint64_t dir, const std::string& name) {
  return ns.Find(dir)->entries.at(name).cookie;
}

TEST_F(NamespaceTest, AnEntryRenamedAwayAndBackTakesItsPositionAgain) {
  const uint64_t before = CookieOf(ns_, 1, "a");
  EXPECT_EQ(before, DirCookieOf("a"));
  ASSERT_TRUE(ns_.Apply(record::Rename{1, "a", 1, "TEMPFILE", 0, 2}).ok());
  EXPECT_EQ(CookieOf(ns_, 1, "TEMPFILE"), DirCookieOf("TEMPFILE"));
  ASSERT_TRUE(ns_.Apply(record::Rename{1, "TEMPFILE", 1, "a", 0, 3}).ok());
  EXPECT_EQ(CookieOf(ns_, 1, "a"), before);
  EXPECT_EQ(ns_.Find(1)->names_by_cookie.size(), 1u);
}

TEST_F(NamespaceTest, ANameWhosePositionIsTakenProbesToTheNextFreeOne) {
  // Two names of one directory hashing alike, staged by occupying the
  // position of the second before it is linked.
  Inode* dir = ns_.Find(2);
  const uint64_t wanted = DirCookieOf("c");
  dir->names_by_cookie[wanted] = "stand-in";
  ASSERT_TRUE(ns_.Apply(record::CreateInode{4, S_IFREG | 0644, 0, 0, 0, 1, ""}).ok());
  ASSERT_TRUE(ns_.Apply(record::Link{2, "c", 4, 1}).ok());
  EXPECT_EQ(CookieOf(ns_, 2, "c"), NextDirCookie(wanted));
  EXPECT_EQ(dir->names_by_cookie.at(NextDirCookie(wanted)), "c");
}

TEST(DirCookieTest, PositionsAreValidOffsetsPastDotAndDotDot) {
  for (const char* name : {"", "a", "b", "TEMPFILE", "model_states_rank0.pt"}) {
    const uint64_t cookie = DirCookieOf(name);
    EXPECT_GE(cookie, kFirstEntryCookie) << name;
    EXPECT_LT(cookie, kCookieLimit) << name;
  }
  EXPECT_NE(DirCookieOf("a"), DirCookieOf("b"));
  EXPECT_EQ(NextDirCookie(kCookieLimit - 1), kFirstEntryCookie);
  // A fixed function of the name: the same positions after a remount, on
  // every build and machine (pinned, so a change to it is seen).
  EXPECT_EQ(DirCookieOf("a"), 198367012849983739ull);
  EXPECT_EQ(DirCookieOf("model_states_rank0.pt"), 4343906713246768829ull);
}

}  // namespace
}  // namespace ckptfs
