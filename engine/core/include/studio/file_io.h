#pragma once
// Writing files that a crash or a hostile run folder cannot corrupt.
//  - writeFileAtomically: a new temporary file beside the target, created
//    exclusively (O_EXCL, never through a link), written, fsynced, renamed
//    over the target (rename replaces a link, never follows it), then the
//    folder fsynced: the target is the old or the new content, whole.
//  - AppendFile: appends to a file opened with O_NOFOLLOW, so a link planted
//    where the file should be is refused, never written through.
// A failed write throws IoError naming the file; a link or another kind of
// file where a file or folder must be throws InputError. Torch-free.
// Thread: free functions, any thread; an AppendFile belongs to one thread.

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "studio/errors.h"

namespace studio {

// `phase`, when given, is called with "temp" once the new content is on the
// disk under its temporary name and with "renamed" once it replaced path
// (the crash-safety tests stop the process there).
void writeFileAtomically(const std::string& path, std::string_view data,
                         const std::function<void(const char* phase)>& phase = {});
// A device, a FIFO, a socket or a folder at path is never replaced: InputError.

// Another name for the file at `from` (best.ckpt beside last.ckpt at the same
// step), made as writeFileAtomically makes its files: a hard link under a
// temporary name beside path, renamed over it (`phase` "temp" and "renamed"
// alike), then the folder fsynced; the bytes are not written again. A later
// writeFileAtomically of `from` replaces that file by a new one and leaves
// path's as it is. False, with path as it was, where the folder takes no
// hard link (another file system, FAT): write the bytes then. A device, a
// FIFO, a socket or a folder at path: InputError.
bool linkFileAtomically(const std::string& from, const std::string& path,
                        const std::function<void(const char* phase)>& phase = {});

// A file a person names for a command to write (option: "--out"): it may be
// missing (its folder there), or with overwrite a regular file; never a link
// (dangling or not), a device, a FIFO, a socket or a folder, nor one of the
// command's inputs. Throws InputError naming the option, the path and what
// it is; nothing has been written then.
void checkOutputFile(const std::string& path, const std::string& option, bool overwrite,
                     const std::vector<std::string>& inputs = {});
// Whether a file's name is one of writeFileAtomically's temporary files
// ("<file>.tmp.XXXXXX"), which a kill during the write leaves behind.
bool isAtomicWriteTemporary(const std::string& fileName);

// Whole file into memory; throws InputError naming it (and `what` it is).
std::string readFileBytes(const std::string& path, const std::string& what = "file");

// An exclusive flock on path (created when missing, never through a link),
// which the kernel releases when the process ends however it ends: the open
// descriptor, to close to release it, or -1 when another process holds it
// and `wait` is false. Throws InputError for a link, IoError when the file
// cannot be made.
int lockFile(const std::string& path, bool wait);

// The process that holds a lockFile() lock on path, when it is another
// process than this one: its pid (0 where /proc/locks cannot show it, as from
// another pid namespace); -1 when no other process holds one. Read from
// /proc/locks, so it takes no lock itself and races with no one.
long lockHolder(const std::string& path);

// Throws InputError unless path is a directory itself (not a link to one).
void requireRealDirectory(const std::string& path);

// Removes the folder and what is in it, links not followed; false when
// something could not be removed. Not std::filesystem::remove_all:
// libtorch.so exports its own copy, which the dynamic linker picks, and it
// crashes (a null call) with this libstdc++.
bool removeTree(const std::string& dir);

class AppendFile {
 public:
  AppendFile() = default;
  // Opens (creating it when missing) for appending; a link is refused.
  explicit AppendFile(const std::string& path);
  ~AppendFile();
  AppendFile(AppendFile&& other) noexcept;
  AppendFile& operator=(AppendFile&& other) noexcept;
  AppendFile(const AppendFile&) = delete;
  AppendFile& operator=(const AppendFile&) = delete;

  bool isOpen() const { return m_fd >= 0; }
  const std::string& path() const { return m_path; }
  void append(std::string_view data);
  // Waits until what was appended is on the disk (fsync).
  void sync();
  void close();

 private:
  int m_fd = -1;
  std::string m_path;
};

// The folder a path lives in ("." for a bare name).
std::string parentFolder(const std::string& path);

}  // namespace studio
