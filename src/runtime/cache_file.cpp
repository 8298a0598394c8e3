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

std::string entry_head(std::string_view key, std::string_view artifact) {
  std::string head;
  head.reserve(kHeaderBytes + key.size() + kTrailerBytes);
  head.append(kMagic);
  put_u32(head, kFormatVersion);
  put_u64(head, key.size());
  head.append(key);
  put_u64(head, artifact.size());
  put_u64(head, XXH3_64bits(artifact.data(), artifact.size()));
  return head;
}

// Every length is checked against the bytes actually present before it is used.
const char* parse_entry(std::string_view data, ParsedEntry* out) {
  if (data.size() < kHeaderBytes) return "truncated header";
  if (data.substr(0, kMagic.size()) != kMagic) return "bad magic";
  if (get_le(data, 8, 4) != kFormatVersion) return "unknown format version";
  const uint64_t key_len = get_le(data, 12, 8);
  size_t offset = kHeaderBytes;
  if (key_len > data.size() - offset) return "truncated key";
  out->key = data.substr(offset, key_len);
  offset += key_len;
  if (data.size() - offset < kTrailerBytes) return "truncated trailer";
  const uint64_t artifact_len = get_le(data, offset, 8);
  const uint64_t checksum = get_le(data, offset + 8, 8);
  offset += kTrailerBytes;
  if (artifact_len > data.size() - offset) return "truncated artifact";
  if (artifact_len < data.size() - offset) return "trailing bytes";
  out->artifact = data.substr(offset);
  if (XXH3_64bits(out->artifact.data(), out->artifact.size()) != checksum) {
    return "checksum mismatch";
  }
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
  auto header = read_at(fd.get(), 0, kHeaderBytes);
  if (!header || header->size() < kHeaderBytes) return std::nullopt;
  if (std::string_view(*header).substr(0, kMagic.size()) != kMagic) return std::nullopt;
  if (get_le(*header, 8, 4) != kFormatVersion) return std::nullopt;
  const uint64_t key_len = get_le(*header, 12, 8);
  if (key_len > size - kHeaderBytes || size - kHeaderBytes - key_len < kTrailerBytes) {
    return std::nullopt;
  }
  // The first line is all a listing shows; a key is read whole only by load().
  auto key = read_at(fd.get(), kHeaderBytes, std::min<uint64_t>(key_len, 4096));
  if (!key) return std::nullopt;
  auto trailer = read_at(fd.get(), kHeaderBytes + key_len, kTrailerBytes);
  if (!trailer || trailer->size() != kTrailerBytes) return std::nullopt;
  // The checksum is not verified here: that would read every artifact to print a listing.
  if (get_le(*trailer, 0, 8) != size - kHeaderBytes - key_len - kTrailerBytes) return std::nullopt;

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
