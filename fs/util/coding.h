// Little-endian encoding of the fixed-width integers and length-prefixed
// strings that make up every on-disk structure. Decoding is bounds-checked:
// a short or garbled buffer yields false, never a read past the end.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace ckptfs {

inline void EncodeFixed32(char* dst, uint32_t v) { std::memcpy(dst, &v, 4); }  // x86/arm64 LE
inline void EncodeFixed64(char* dst, uint64_t v) { std::memcpy(dst, &v, 8); }
inline uint32_t DecodeFixed32(const char* p) { uint32_t v; std::memcpy(&v, p, 4); return v; }
inline uint64_t DecodeFixed64(const char* p) { uint64_t v; std::memcpy(&v, p, 8); return v; }

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "on-disk format is little-endian");

// Appends encoded values to a string buffer.
class Encoder {
 public:
  explicit Encoder(std::string* out) : out_(out) {}
  void U8(uint8_t v) { out_->push_back(static_cast<char>(v)); }
  void U32(uint32_t v) { char b[4]; EncodeFixed32(b, v); out_->append(b, 4); }
  void U64(uint64_t v) { char b[8]; EncodeFixed64(b, v); out_->append(b, 8); }
  void I64(int64_t v) { U64(static_cast<uint64_t>(v)); }
  // u32 length, then the bytes.
  void Bytes(std::string_view s) { U32(static_cast<uint32_t>(s.size())); out_->append(s); }

 private:
  std::string* out_;
};

// Reads values in order from a buffer; every call fails once the buffer runs out.
class Decoder {
 public:
  explicit Decoder(std::string_view in) : in_(in) {}
  bool U8(uint8_t* v) {
    if (in_.size() < 1) return false;
    *v = static_cast<uint8_t>(in_[0]);
    in_.remove_prefix(1);
    return true;
  }
  bool U32(uint32_t* v) {
    if (in_.size() < 4) return false;
    *v = DecodeFixed32(in_.data());
    in_.remove_prefix(4);
    return true;
  }
  bool U64(uint64_t* v) {
    if (in_.size() < 8) return false;
    *v = DecodeFixed64(in_.data());
    in_.remove_prefix(8);
    return true;
  }
  bool I64(int64_t* v) {
    uint64_t u;
    if (!U64(&u)) return false;
    *v = static_cast<int64_t>(u);
    return true;
  }
  bool Bytes(std::string* s) {
    uint32_t n;
    if (!U32(&n) || in_.size() < n) return false;
    s->assign(in_.data(), n);
    in_.remove_prefix(n);
    return true;
  }
  bool empty() const { return in_.empty(); }
  std::string_view rest() const { return in_; }

 private:
  std::string_view in_;
};

}  // namespace ckptfs
