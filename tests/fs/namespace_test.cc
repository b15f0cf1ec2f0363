// Namespace::Apply refuses records that would break the tree, as only a
// damaged or forged log could contain: directory cycles and second names.
#include "meta/namespace.h"

#include <gtest/gtest.h>

namespace ckptfs {
namespace {

class NullObserver : public SpaceObserver {
 public:
  void Referenced(const PhysicalExtent&, uint64_t) override {}
  void Released(const PhysicalExtent&, uint64_t) override {}
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

}  // namespace
}  // namespace ckptfs
