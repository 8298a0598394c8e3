#include "runtime/private_dir.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <pwd.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>
#include <vector>

#include <fmt/format.h>

namespace tack {
namespace {

namespace fs = std::filesystem;

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

// Whether `path` is `root` or below it; both canonical.
bool is_within(const fs::path& path, const fs::path& root) {
  auto p = path.begin();
  for (auto r = root.begin(); r != root.end(); ++r, ++p) {
    if (p == path.end() || *p != *r) return false;
  }
  return true;
}

std::string check_directory(const fs::path& path, const struct stat& st, bool must_be_own) {
  const uid_t me = ::geteuid();
  if (!S_ISDIR(st.st_mode)) return fmt::format("{} is not a directory", path.string());
  const bool group_or_other_writable = (st.st_mode & (S_IWGRP | S_IWOTH)) != 0;
  if (must_be_own) {
    if (st.st_uid != me) {
      return fmt::format(
          "{} is owned by {}, not by you ({}): whoever owns it can plant code there that Tack "
          "would run; use a directory of your own (set TACK_CACHE_DIR)",
          path.string(), user_name(st.st_uid), user_name(me));
    }
    if (group_or_other_writable) {
      return fmt::format(
          "{} (mode {}) is writable by {}, who could plant code there that Tack would run; "
          "make it private with `chmod 700 {}`, or set TACK_CACHE_DIR to a directory of your own",
          path.string(), mode_text(st.st_mode), other_writers(st.st_mode), path.string());
    }
    return "";
  }
  if (st.st_uid != me && st.st_uid != 0) {
    return fmt::format(
        "{}, a parent of the cache directory, is owned by {}, not by you ({}) or root: its owner "
        "could replace the cache directory; set TACK_CACHE_DIR to a directory of your own",
        path.string(), user_name(st.st_uid), user_name(me));
  }
  if (group_or_other_writable && !(st.st_mode & S_ISVTX)) {
    return fmt::format(
        "{}, a parent of the cache directory, (mode {}) is writable by {}, who could replace the "
        "cache directory; set TACK_CACHE_DIR to a directory only you can write",
        path.string(), mode_text(st.st_mode), other_writers(st.st_mode));
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

PrivateDir open_private_dir(const fs::path& dir, const fs::path& private_root) {
  PrivateDir out;
  std::error_code ec;
  const fs::path absolute = fs::absolute(dir, ec);
  if (ec) {
    out.error = fmt::format("cannot use the cache directory {}: {}", dir.string(), ec.message());
    return out;
  }
  fs::path partial;
  for (const fs::path& part : absolute) {
    partial /= part;
    if (::mkdir(partial.c_str(), 0700) != 0 && errno != EEXIST) {
      out.error = fmt::format("cannot create the cache directory {}: {}", partial.string(),
                              errno_text(errno));
      return out;
    }
  }
  out.real = fs::canonical(absolute, ec);
  if (ec) {
    out.error =
        fmt::format("cannot create the cache directory {}: {}", absolute.string(), ec.message());
    return out;
  }
  fs::path root = out.real;
  if (!private_root.empty()) {
    std::error_code root_ec;
    fs::path real_root = fs::canonical(private_root, root_ec);
    if (!root_ec && is_within(out.real, real_root)) root = real_root;
  }

  // From `/` down, so that the first problem reported is the outermost one.
  struct stat st {};
  fs::path walked;
  for (const fs::path& part : out.real) {
    walked /= part;
    if (::lstat(walked.c_str(), &st) != 0) {
      out.error = fmt::format("cannot inspect {}: {}", walked.string(), errno_text(errno));
      return out;
    }
    std::string problem = check_directory(walked, st, is_within(walked, root));
    if (!problem.empty()) {
      out.error = std::move(problem);
      out.refused = S_ISDIR(st.st_mode);
      return out;
    }
  }
  const int fd = ::open(out.real.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  struct stat opened {};
  if (fd < 0 || ::fstat(fd, &opened) != 0 || opened.st_dev != st.st_dev ||
      opened.st_ino != st.st_ino) {
    out.error = fmt::format("cannot open the cache directory {}: {}", out.real.string(),
                            fd < 0 ? errno_text(errno) : "it was replaced while being checked");
    if (fd >= 0) ::close(fd);
    return out;
  }
  // Checked on the descriptor: root passes, and a directory it cannot use would fail every store.
  if (::faccessat(fd, ".", R_OK | W_OK | X_OK, AT_EACCESS) != 0) {
    out.error = fmt::format("cannot use the cache directory {} (mode {}): {}; `chmod 700 {}`",
                            out.real.string(), mode_text(opened.st_mode), errno_text(errno),
                            out.real.string());
    ::close(fd);
    return out;
  }
  out.fd = fd;
  return out;
}

}  // namespace tack
