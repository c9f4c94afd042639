#pragma once
// A folder that appears whole or not at all (issue 59, item 8: an export
// onto a full disk left half its files, and the next export there was
// refused as "an earlier export?"). Its files are written into a staging
// folder on the same file system: beside the target when the target does
// not exist yet (commit() is then one rename of the whole folder), else
// inside it (commit() renames each entry into place, merging a folder's
// entries into one of the same name there). A failure before commit() (an
// exception, a full disk) removes the staging folder and leaves the target
// as it was; a kill leaves only the staging folder, named
// ".<target>.incomplete-<pid>-<n>" beside it or ".incomplete-<pid>-<n>"
// inside it, which the next StagedFolder of that target removes.
// Thread: the thread that writes the folder.

#include <string>

namespace studio {

// The target as a StagedFolder names it: "out/" is "out".
std::string stagedTarget(const std::string& target);

class StagedFolder {
 public:
  // The target's parent must exist. Throws IoError naming the target when
  // the staging folder cannot be made.
  explicit StagedFolder(const std::string& target);
  ~StagedFolder();  // removes the staging folder unless committed
  StagedFolder(const StagedFolder&) = delete;
  StagedFolder& operator=(const StagedFolder&) = delete;

  const std::string& path() const { return m_stage; }
  // Puts the staged files in place. Throws IoError naming the file that
  // could not be moved.
  void commit();
  // A path under path(), as it is under the target after commit().
  std::string finalPath(const std::string& staged) const;

 private:
  std::string m_target, m_stage;
  bool m_inside = false, m_committed = false;
};

}  // namespace studio
