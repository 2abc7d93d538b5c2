// AtomicFile (analyzer/util/fileio.h): pieces written at their offsets, from two threads at once,
// appear at the path only on Commit; an uncommitted file leaves the old content and no temp file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "analyzer/util/fileio.h"
#include "temp_file.h"

namespace tg {
namespace {

namespace fs = std::filesystem;

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The files in `path`'s folder whose name starts with `path`'s (the temp files beside it).
int Beside(const std::string& path) {
  const std::string name = fs::path(path).filename().string();
  int n = 0;
  for (const auto& e : fs::directory_iterator(fs::path(path).parent_path()))
    if (e.path().filename().string().rfind(name, 0) == 0) ++n;
  return n;
}

TEST(AtomicFile, PiecesAtTheirOffsetsFromTwoThreadsAppearOnCommit) {
  const std::string path = testing::WriteTempFile("out.json", "old");
  const std::string a(300000, 'a'), b(200000, 'b'), c = "tail\n";
  internal::AtomicFile file(path);
  ASSERT_TRUE(file.Open().ok());
  Status first;
  std::thread t([&] { first = file.WriteAt(0, a); });
  ASSERT_TRUE(file.WriteAt(a.size() + b.size(), c).ok());  // the end first
  ASSERT_TRUE(file.WriteAt(a.size(), b).ok());
  t.join();
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(Read(path), "old");  // not before Commit
  ASSERT_TRUE(file.Commit().ok());
  EXPECT_EQ(Read(path), a + b + c);
  EXPECT_EQ(Beside(path), 1);  // the temp file is the file now
}

TEST(AtomicFile, WithoutCommitTheOldFileStaysAndNoTempFileIsLeft) {
  const std::string path = testing::WriteTempFile("kept.json", "old");
  {
    internal::AtomicFile file(path);
    ASSERT_TRUE(file.Open().ok());
    ASSERT_TRUE(file.WriteAt(0, "new, unfinished").ok());
    EXPECT_EQ(Beside(path), 2);
  }
  EXPECT_EQ(Read(path), "old");
  EXPECT_EQ(Beside(path), 1);
}

TEST(AtomicFile, AFolderThatIsNotThereIsOneLineNamingThePath) {
  const std::string path = testing::TempPath("missing") + "/out.json";
  internal::AtomicFile file(path);
  const Status s = file.Open();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message().rfind(path + ": cannot create: ", 0), 0u) << s.message();
}

}  // namespace
}  // namespace tg
