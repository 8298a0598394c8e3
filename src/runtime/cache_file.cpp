#include "runtime/cache_file.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <system_error>

#include <xxhash.h>

namespace tack::cache_file {
namespace {

void put_u32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void put_u64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t get_le(std::string_view data, size_t offset, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) {
    v |= static_cast<uint64_t>(static_cast<unsigned char>(data[offset + i])) << (8 * i);
  }
  return v;
}

}  // namespace

std::string entry_tail(std::string_view key, std::string_view artifact) {
  std::string tail;
  tail.reserve(key.size() + kFooterBytes);
  tail.append(key);
  put_u64(tail, artifact.size());
  put_u64(tail, key.size());
  put_u64(tail, XXH3_64bits(artifact.data(), artifact.size()));
  put_u32(tail, kFormatVersion);
  tail.append(kMagic);
  return tail;
}

namespace {

struct Footer {
  uint64_t artifact_len = 0, key_len = 0, checksum = 0;
};

// The footer at the end of `tail` (the last kFooterBytes of a file of `size` bytes), or what is
// wrong with it. Every length is checked against the bytes the file has before it is used.
const char* parse_footer(std::string_view tail, uint64_t size, Footer* out) {
  if (tail.size() < kFooterBytes || size < kFooterBytes) return "truncated footer";
  tail = tail.substr(tail.size() - kFooterBytes);
  if (tail.substr(kFooterBytes - kMagic.size()) != kMagic) return "bad magic";
  if (get_le(tail, 24, 4) != kFormatVersion) return "unknown format version";
  out->artifact_len = get_le(tail, 0, 8);
  out->key_len = get_le(tail, 8, 8);
  out->checksum = get_le(tail, 16, 8);
  const uint64_t body = size - kFooterBytes;
  if (out->key_len > body) return "truncated key";
  if (out->artifact_len > body - out->key_len) return "truncated artifact";
  if (out->artifact_len < body - out->key_len) return "stray bytes";
  return nullptr;
}

}  // namespace

const char* parse_entry(std::string_view data, ParsedEntry* out) {
  Footer f;
  if (const char* problem = parse_footer(data, data.size(), &f)) return problem;
  out->artifact = data.substr(0, f.artifact_len);
  out->key = data.substr(f.artifact_len, f.key_len);
  if (XXH3_64bits(out->artifact.data(), out->artifact.size()) != f.checksum)
    return "checksum mismatch";
  return nullptr;
}

std::string errno_text(int err) {
  return std::error_code(err, std::generic_category()).message();
}

// Reads up to `size` bytes at `offset`; fewer only at end of file. nullopt on an I/O error.
std::optional<std::string> read_at(int fd, uint64_t offset, size_t size) {
  std::string buf(size, '\0');
  size_t done = 0;
  while (done < size) {
    const ssize_t got =
        ::pread(fd, buf.data() + done, size - done, static_cast<off_t>(offset + done));
    if (got < 0) {
      if (errno == EINTR) continue;
      return std::nullopt;
    }
    if (got == 0) break;
    done += static_cast<size_t>(got);
  }
  buf.resize(done);
  return buf;
}

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t put = ::write(fd, data.data(), data.size());
    if (put < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<size_t>(put));
  }
  return true;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool is_entry_name(std::string_view name) {
  return !name.empty() && name.front() != '.' && ends_with(name, kEntrySuffix);
}

bool is_temp_name(std::string_view name) {
  return !name.empty() && name.front() == '.' && ends_with(name, kTempSuffix);
}

bool is_lock_name(std::string_view name) {
  return !name.empty() && name.front() == '.' && ends_with(name, kLockSuffix);
}

// What is printable of a key's first line: a tool prints it, and a planted file could hold
// terminal escape sequences.
std::string printable_summary(std::string_view key) {
  std::string out(key.substr(0, key.find('\n')));
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  }
  return out;
}

std::optional<CacheEntryInfo> describe_entry(const std::filesystem::path& path) {
  Fd fd(::open(path.c_str(), kEntryOpenFlags));
  if (fd.get() < 0) return std::nullopt;
  struct stat st;
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size < kFooterBytes) return std::nullopt;
  auto tail = read_at(fd.get(), size - kFooterBytes, kFooterBytes);
  Footer f;
  // The checksum is not verified here: that would read every artifact to print a listing.
  if (!tail || parse_footer(*tail, size, &f) != nullptr) return std::nullopt;
  // The first line is all a listing shows; a key is read whole only by load().
  auto key = read_at(fd.get(), f.artifact_len, std::min<uint64_t>(f.key_len, 4096));
  if (!key) return std::nullopt;

  CacheEntryInfo info;
  info.file = path.filename().string();
  info.key_summary = printable_summary(*key);
  if (size_t at = key->find("\nkernel "); at != std::string::npos)
    info.signature = printable_summary(std::string_view(*key).substr(at + 1));
  info.bytes = size;
  info.backend = info.file.substr(0, info.file.rfind('-'));
  info.mtime = static_cast<int64_t>(st.st_mtime);
  return info;
}

}  // namespace tack::cache_file
