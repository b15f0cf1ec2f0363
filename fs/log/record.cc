// Record encoding and decoding. Each record struct has its type number
// written out below (kRecordType): the numbers are the format, and nothing
// else (the variant's order, say) may decide them.
#include "log/record.h"

#include <utility>

#include "util/coding.h"

namespace ckptfs {
namespace {

template <typename T>
constexpr uint8_t kRecordType = 0;
template <> constexpr uint8_t kRecordType<record::CreateInode> = 1;
template <> constexpr uint8_t kRecordType<record::Link> = 2;
template <> constexpr uint8_t kRecordType<record::Unlink> = 3;
template <> constexpr uint8_t kRecordType<record::Rename> = 4;
template <> constexpr uint8_t kRecordType<record::SetAttr> = 5;
template <> constexpr uint8_t kRecordType<record::Truncate> = 6;
template <> constexpr uint8_t kRecordType<record::WriteExtent> = 7;  // raw runs; 13 compressed
template <> constexpr uint8_t kRecordType<record::SetXattr> = 8;
template <> constexpr uint8_t kRecordType<record::RemoveXattr> = 9;
template <> constexpr uint8_t kRecordType<record::FreeInode> = 10;
template <> constexpr uint8_t kRecordType<record::NextSegment> = 11;
template <> constexpr uint8_t kRecordType<record::NextInode> = 12;
constexpr uint8_t kCompressedWriteExtentType = 13;
template <> constexpr uint8_t kRecordType<record::PunchHole> = 14;
template <> constexpr uint8_t kRecordType<record::Reserve> = 15;

// Every alternative has a number of its own, none of them 0 or 13.
template <size_t... I>
constexpr bool TypesAreDistinct(std::index_sequence<I...>) {
  constexpr uint8_t types[] = {kRecordType<std::variant_alternative_t<I, Record>>...};
  for (size_t a = 0; a < sizeof...(I); ++a) {
    if (types[a] == 0 || types[a] == kCompressedWriteExtentType) return false;
    for (size_t b = a + 1; b < sizeof...(I); ++b) {
      if (types[a] == types[b]) return false;
    }
  }
  return true;
}
static_assert(TypesAreDistinct(std::make_index_sequence<std::variant_size_v<Record>>()),
              "every record type needs its own number in kRecordType");

struct BodyEncoder {
  Encoder& e;
  void operator()(const record::CreateInode& r) {
    e.U64(r.ino); e.U32(r.mode); e.U32(r.uid); e.U32(r.gid); e.U64(r.rdev); e.I64(r.time_ns);
    e.Bytes(r.symlink_target);
  }
  void operator()(const record::Link& r) { e.U64(r.parent); e.Bytes(r.name); e.U64(r.ino); e.I64(r.time_ns); }
  void operator()(const record::Unlink& r) { e.U64(r.parent); e.Bytes(r.name); e.I64(r.time_ns); }
  void operator()(const record::Rename& r) {
    e.U64(r.src_parent); e.Bytes(r.src_name); e.U64(r.dst_parent); e.Bytes(r.dst_name);
    e.U32(r.flags); e.I64(r.time_ns);
  }
  void operator()(const record::SetAttr& r) {
    e.U64(r.ino); e.U32(r.valid); e.U32(r.mode); e.U32(r.uid); e.U32(r.gid);
    e.I64(r.atime_ns); e.I64(r.mtime_ns); e.I64(r.ctime_ns);
  }
  void operator()(const record::Truncate& r) { e.U64(r.ino); e.U64(r.size); e.I64(r.time_ns); }
  void operator()(const record::WriteExtent& r) {
    e.U64(r.ino); e.U64(r.offset); e.U32(r.length); e.U64(r.phys.addr); e.U32(r.phys.length);
    e.U32(r.phys.crc); e.U32(r.skip); e.I64(r.mtime_ns);
    if (r.phys.compressed()) {
      e.U8(r.phys.codec); e.U32(r.phys.raw_length);
    }
  }
  void operator()(const record::SetXattr& r) { e.U64(r.ino); e.Bytes(r.name); e.Bytes(r.value); e.I64(r.time_ns); }
  void operator()(const record::RemoveXattr& r) { e.U64(r.ino); e.Bytes(r.name); e.I64(r.time_ns); }
  void operator()(const record::FreeInode& r) { e.U64(r.ino); }
  void operator()(const record::NextSegment& r) { e.U32(r.segment); }
  void operator()(const record::NextInode& r) { e.U64(r.next); }
  void operator()(const record::PunchHole& r) {
    e.U64(r.ino); e.U64(r.offset); e.U64(r.length); e.I64(r.time_ns);
  }
  void operator()(const record::Reserve& r) { e.U64(r.ino); e.U64(r.offset); e.U64(r.length); }
};

template <typename T>
bool DecodeBody(Decoder& d, T* r);

template <>
bool DecodeBody(Decoder& d, record::CreateInode* r) {
  return d.U64(&r->ino) && d.U32(&r->mode) && d.U32(&r->uid) && d.U32(&r->gid) &&
         d.U64(&r->rdev) && d.I64(&r->time_ns) && d.Bytes(&r->symlink_target);
}
template <>
bool DecodeBody(Decoder& d, record::Link* r) {
  return d.U64(&r->parent) && d.Bytes(&r->name) && d.U64(&r->ino) && d.I64(&r->time_ns);
}
template <>
bool DecodeBody(Decoder& d, record::Unlink* r) {
  return d.U64(&r->parent) && d.Bytes(&r->name) && d.I64(&r->time_ns);
}
template <>
bool DecodeBody(Decoder& d, record::Rename* r) {
  return d.U64(&r->src_parent) && d.Bytes(&r->src_name) && d.U64(&r->dst_parent) &&
         d.Bytes(&r->dst_name) && d.U32(&r->flags) && d.I64(&r->time_ns);
}
template <>
bool DecodeBody(Decoder& d, record::SetAttr* r) {
  return d.U64(&r->ino) && d.U32(&r->valid) && d.U32(&r->mode) && d.U32(&r->uid) &&
         d.U32(&r->gid) && d.I64(&r->atime_ns) && d.I64(&r->mtime_ns) && d.I64(&r->ctime_ns);
}
template <>
bool DecodeBody(Decoder& d, record::Truncate* r) {
  return d.U64(&r->ino) && d.U64(&r->size) && d.I64(&r->time_ns);
}
template <>
bool DecodeBody(Decoder& d, record::WriteExtent* r) {
  return d.U64(&r->ino) && d.U64(&r->offset) && d.U32(&r->length) && d.U64(&r->phys.addr) &&
         d.U32(&r->phys.length) && d.U32(&r->phys.crc) && d.U32(&r->skip) && d.I64(&r->mtime_ns);
}
// Type 13: a WriteExtent of a compressed run.
bool DecodeCompressedWriteExtent(Decoder& d, record::WriteExtent* r) {
  // raw_len is bounded before anything allocates a buffer of that size.
  return DecodeBody(d, r) && d.U8(&r->phys.codec) && d.U32(&r->phys.raw_length) &&
         r->phys.codec != 0 && r->phys.codec <= kMaxCodec && r->phys.raw_length > 0 &&
         r->phys.raw_length <= PhysicalExtent::kMaxRunLength && d.empty();
}
template <>
bool DecodeBody(Decoder& d, record::SetXattr* r) {
  return d.U64(&r->ino) && d.Bytes(&r->name) && d.Bytes(&r->value) && d.I64(&r->time_ns);
}
template <>
bool DecodeBody(Decoder& d, record::RemoveXattr* r) {
  return d.U64(&r->ino) && d.Bytes(&r->name) && d.I64(&r->time_ns);
}
template <>
bool DecodeBody(Decoder& d, record::FreeInode* r) { return d.U64(&r->ino); }
template <>
bool DecodeBody(Decoder& d, record::NextSegment* r) { return d.U32(&r->segment); }
template <>
bool DecodeBody(Decoder& d, record::NextInode* r) { return d.U64(&r->next); }
template <>
bool DecodeBody(Decoder& d, record::PunchHole* r) {
  return d.U64(&r->ino) && d.U64(&r->offset) && d.U64(&r->length) && d.I64(&r->time_ns);
}
template <>
bool DecodeBody(Decoder& d, record::Reserve* r) {
  return d.U64(&r->ino) && d.U64(&r->offset) && d.U64(&r->length) &&
         r->length <= UINT64_MAX - r->offset;
}

// Decodes a body of the alternative whose number is `type`.
template <size_t I = 0>
Result<Record> DecodeAlternative(uint8_t type, Decoder& d) {
  if constexpr (I < std::variant_size_v<Record>) {
    using T = std::variant_alternative_t<I, Record>;
    if (type == kRecordType<T>) {
      T r{};
      if (!DecodeBody(d, &r) || !d.empty()) return Status::Corruption("malformed log record body");
      return Record(std::move(r));
    }
    return DecodeAlternative<I + 1>(type, d);
  } else {
    return Status::Corruption("unknown log record type " + std::to_string(type));
  }
}

}  // namespace

void EncodeRecord(const Record& r, std::string* out) {
  std::string body;
  Encoder be(&body);
  std::visit(BodyEncoder{be}, r);
  Encoder e(out);
  const auto* write = std::get_if<record::WriteExtent>(&r);
  const uint8_t type =
      std::visit([](const auto& rec) { return kRecordType<std::decay_t<decltype(rec)>>; }, r);
  e.U8(write && write->phys.compressed() ? kCompressedWriteExtentType : type);
  e.Bytes(body);
}

Result<Record> DecodeRecord(std::string_view* in) {
  Decoder d(*in);
  uint8_t type;
  std::string body;
  if (!d.U8(&type) || !d.Bytes(&body)) return Status::Corruption("truncated log record");
  if (type == 0) return Status::Corruption("log record of type 0");
  *in = d.rest();
  Decoder bd(body);
  if (type == kCompressedWriteExtentType) {
    record::WriteExtent w{};
    if (!DecodeCompressedWriteExtent(bd, &w)) {
      return Status::Corruption("malformed compressed extent record");
    }
    return Record(w);
  }
  return DecodeAlternative(type, bd);
}

}  // namespace ckptfs
