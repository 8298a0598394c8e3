// A directory that only the current user (and root) can write: where Tack keeps code it runs.
#pragma once

#include <sys/stat.h>

#include <optional>
#include <string>
#include <string_view>

namespace tack {

struct PrivateDir {
  int fd = -1;           // the directory, open (O_DIRECTORY | O_CLOEXEC); -1 on failure
  std::string real;      // its canonical path
  std::string error;     // why it cannot be used, with what to change; empty on success
  bool refused = false;  // it exists, but someone else could write it (vs. cannot create)
};

// Creates the missing directories of `dir` (mode 0700), then checks the canonical path from `/`
// down: every directory from `private_root` (the user's cache root; `dir` itself when empty or
// not an ancestor) down to `dir` must be owned by the current user and writable by no group or
// other user; every directory above must be owned by the user or root and writable only by them,
// unless it is sticky (like /tmp, where no one can rename or remove another user's files).
// Returns the directory open, checked to be the one that was inspected.
PrivateDir open_private_dir(const std::string& dir, const std::string& private_root);

// What is wrong with a file (or whatever is at an entry's name) described by `st`, as something
// this user's process may read and run: a link, not a regular file, another owner, writable by a
// group or others, or over `max_bytes`. Empty when nothing is. `*refused` says whether the problem
// is one of ownership or permissions.
std::string file_problem(const struct stat& st, unsigned long long max_bytes, bool* refused);

// Whether the file system of the open file `fd` is one of this machine's own disks or memory
// (ext4, XFS, Btrfs, tmpfs...), whose files only this machine's processes change, rather than a
// network or user-space one (NFS, SMB, Lustre, FUSE...), where another machine can remove a file
// that a process here has mapped and its next page fault then fails.
bool on_local_file_system(int fd);

// The user's name for `uid` ("uid 1000" when it has none).
std::string user_name(uid_t uid);

// `dir`/`name`, with one '/' between them. Paths here are strings, not std::filesystem's: they
// are made at each process's first kernel call, where the C++ library's path code would run for
// the first time.
std::string joined_path(std::string dir, std::string_view name);

// `path` made absolute against the working directory (unchanged when it is absolute already), or
// nullopt with errno set when the working directory cannot be read.
std::optional<std::string> absolute_path(const std::string& path);

}  // namespace tack
