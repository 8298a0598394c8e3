#include "runtime/private_dir.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <pwd.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string_view>
#include <system_error>
#include <vector>

#include <fmt/format.h>

namespace tack {
namespace {

std::string errno_text(int err) {
  return std::error_code(err, std::generic_category()).message();
}

std::string mode_text(mode_t mode) {
  return fmt::format("{:04o}", static_cast<unsigned>(mode & 07777));
}

// Who besides the owner may write a directory with `mode`.
const char* other_writers(mode_t mode) {
  if ((mode & S_IWGRP) && (mode & S_IWOTH)) return "its group and every other user";
  if (mode & S_IWOTH) return "every other user";
  return "its group";
}

// Whether `path` is `root` or below it; both canonical (absolute, no "." or ".." or repeated '/',
// no '/' at the end but for "/" itself).
bool is_within(std::string_view path, std::string_view root) {
  if (!path.starts_with(root)) return false;
  return path.size() == root.size() || root.ends_with('/') || path[root.size()] == '/';
}

// The canonical path of an existing `path` (realpath(3)), or empty with errno set.
std::string canonical(const std::string& path) {
  char* real = ::realpath(path.c_str(), nullptr);
  if (real == nullptr) return "";
  std::string out(real);
  std::free(real);
  return out;
}

std::string check_directory(const std::string& path, const struct stat& st, bool must_be_own) {
  const uid_t me = ::geteuid();
  if (!S_ISDIR(st.st_mode)) return fmt::format("{} is not a directory", path);
  const bool group_or_other_writable = (st.st_mode & (S_IWGRP | S_IWOTH)) != 0;
  if (must_be_own) {
    if (st.st_uid != me) {
      return fmt::format(
          "{} is owned by {}, not by you ({}): whoever owns it can plant code there that Tack "
          "would run; use a directory of your own (set TACK_CACHE_DIR)",
          path, user_name(st.st_uid), user_name(me));
    }
    if (group_or_other_writable) {
      return fmt::format(
          "{} (mode {}) is writable by {}, who could plant code there that Tack would run; "
          "make it private with `chmod 700 {}`, or set TACK_CACHE_DIR to a directory of your own",
          path, mode_text(st.st_mode), other_writers(st.st_mode), path);
    }
    return "";
  }
  if (st.st_uid != me && st.st_uid != 0) {
    return fmt::format(
        "{}, a parent of the cache directory, is owned by {}, not by you ({}) or root: its owner "
        "could replace the cache directory; set TACK_CACHE_DIR to a directory of your own",
        path, user_name(st.st_uid), user_name(me));
  }
  if (group_or_other_writable && !(st.st_mode & S_ISVTX)) {
    return fmt::format(
        "{}, a parent of the cache directory, (mode {}) is writable by {}, who could replace the "
        "cache directory; set TACK_CACHE_DIR to a directory only you can write",
        path, mode_text(st.st_mode), other_writers(st.st_mode));
  }
  return "";
}

}  // namespace

bool on_local_file_system(int fd) {
  struct statfs fs {};
  if (::fstatfs(fd, &fs) != 0) return false;
  constexpr unsigned long kZfs = 0x2fc12fc1, kBcachefs = 0xca451a4e;  // not in <linux/magic.h>
  switch (static_cast<unsigned long>(fs.f_type)) {
    case EXT4_SUPER_MAGIC:  // ext2 and ext3 too
    case XFS_SUPER_MAGIC:
    case BTRFS_SUPER_MAGIC:
    case F2FS_SUPER_MAGIC:
    case TMPFS_MAGIC:
    case OVERLAYFS_SUPER_MAGIC:  // a container's root, over local layers
    case kZfs:
    case kBcachefs:
      return true;
    default:
      return false;
  }
}

std::string user_name(uid_t uid) {
  struct passwd pw;
  struct passwd* found = nullptr;
  std::vector<char> buf(16384);
  if (::getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) == 0 && found != nullptr) {
    return fmt::format("{} (uid {})", found->pw_name, uid);
  }
  return fmt::format("uid {}", uid);
}

std::string file_problem(const struct stat& st, unsigned long long max_bytes, bool* refused) {
  *refused = true;
  if (S_ISLNK(st.st_mode)) return "is a symbolic link";
  if (st.st_uid != ::geteuid()) {
    return fmt::format("is owned by {}, not by you", user_name(st.st_uid));
  }
  if (S_ISREG(st.st_mode) && (st.st_mode & (S_IWGRP | S_IWOTH))) {
    return fmt::format("(mode {}) is writable by {}", mode_text(st.st_mode),
                       other_writers(st.st_mode));
  }
  *refused = false;
  if (!S_ISREG(st.st_mode)) return "is not a regular file";
  if (static_cast<unsigned long long>(st.st_size) > max_bytes) {
    return fmt::format("is {} bytes, over the limit of {} bytes for one entry",
                       static_cast<long long>(st.st_size), max_bytes);
  }
  return "";
}

std::string joined_path(std::string dir, std::string_view name) {
  if (!dir.ends_with('/')) dir += '/';
  return dir.append(name);
}

std::optional<std::string> absolute_path(const std::string& path) {
  if (path.starts_with('/')) return path;
  char* cwd = ::getcwd(nullptr, 0);
  if (cwd == nullptr) return std::nullopt;
  std::string out = path.empty() ? std::string(cwd) : joined_path(cwd, path);
  std::free(cwd);
  return out;
}

// Plain strings and system calls rather than std::filesystem: this runs at each process's first
// kernel call, where the first use of the C++ library's path code cost about 0.05 ms.
PrivateDir open_private_dir(const std::string& dir, const std::string& private_root) {
  PrivateDir out;
  const std::optional<std::string> made_absolute = absolute_path(dir);
  if (!made_absolute) {
    out.error = fmt::format("cannot use the cache directory {}: {}", dir, errno_text(errno));
    return out;
  }
  const std::string& absolute = *made_absolute;
  out.real = canonical(absolute);
  if (out.real.empty() && errno == ENOENT) {
    // Each missing directory, from the top.
    for (size_t end = absolute.find('/', 1);; end = absolute.find('/', end + 1)) {
      const std::string partial = absolute.substr(0, end);
      if (::mkdir(partial.c_str(), 0700) != 0 && errno != EEXIST) {
        out.error =
            fmt::format("cannot create the cache directory {}: {}", partial, errno_text(errno));
        return out;
      }
      if (end == std::string::npos) break;
    }
    out.real = canonical(absolute);
  }
  if (out.real.empty()) {
    out.error =
        fmt::format("cannot create the cache directory {}: {}", absolute, errno_text(errno));
    return out;
  }
  std::string root = out.real;
  if (!private_root.empty()) {
    const std::string real_root = canonical(private_root);
    if (!real_root.empty() && is_within(out.real, real_root)) root = real_root;
  }

  // From `/` down, so that the first problem reported is the outermost one.
  struct stat st {};
  for (size_t end = 1;; end = out.real.find('/', end + 1)) {
    const std::string walked = out.real.substr(0, end);
    if (::lstat(walked.c_str(), &st) != 0) {
      out.error = fmt::format("cannot inspect {}: {}", walked, errno_text(errno));
      return out;
    }
    std::string problem = check_directory(walked, st, is_within(walked, root));
    if (!problem.empty()) {
      out.error = std::move(problem);
      out.refused = S_ISDIR(st.st_mode);
      return out;
    }
    if (end == std::string::npos || walked.size() == out.real.size()) break;
  }
  const int fd = ::open(out.real.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  struct stat opened {};
  if (fd < 0 || ::fstat(fd, &opened) != 0 || opened.st_dev != st.st_dev ||
      opened.st_ino != st.st_ino) {
    out.error = fmt::format("cannot open the cache directory {}: {}", out.real,
                            fd < 0 ? errno_text(errno) : "it was replaced while being checked");
    if (fd >= 0) ::close(fd);
    return out;
  }
  // Checked on the descriptor: root passes, and a directory it cannot use would fail every store.
  if (::faccessat(fd, ".", R_OK | W_OK | X_OK, AT_EACCESS) != 0) {
    out.error = fmt::format("cannot use the cache directory {} (mode {}): {}; `chmod 700 {}`",
                            out.real, mode_text(opened.st_mode), errno_text(errno), out.real);
    ::close(fd);
    return out;
  }
  out.fd = fd;
  return out;
}

}  // namespace tack
