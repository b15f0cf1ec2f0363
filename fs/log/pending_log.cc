// PendingLog implementation.
#include "log/pending_log.h"

#include <cassert>

namespace ckptfs {

uint64_t PendingLog::Append(const Record& r) {
  if (chunks_.empty() || chunks_.back().reserved) chunks_.emplace_back();
  Chunk& chunk = chunks_.back();
  const size_t before = chunk.bytes.size();
  EncodeRecord(r, &chunk.bytes);
  ready_bytes_ += chunk.bytes.size() - before;
  chunk.last_seq = ++last_seq_;
  return last_seq_;
}

uint64_t PendingLog::Reserve(uint64_t key) {
  Chunk& chunk = chunks_.emplace_back();
  chunk.reserved = true;
  chunk.last_seq = ++last_seq_;
  assert(!reserved_.count(key) && "one reserved place per key");
  reserved_[key] = &chunk;
  return last_seq_;
}

uint64_t PendingLog::ready_seq() const {
  uint64_t seq = taken_seq_;
  for (const Chunk& chunk : chunks_) {
    if (chunk.reserved) break;
    seq = chunk.last_seq;
  }
  return seq;
}

bool PendingLog::Fill(uint64_t key, std::string encoded) {
  auto it = reserved_.find(key);
  assert(it != reserved_.end() && "Fill of a place never reserved");
  if (it == reserved_.end()) return false;
  Chunk* chunk = it->second;
  reserved_.erase(it);
  ready_bytes_ += encoded.size();
  chunk->bytes = std::move(encoded);
  chunk->reserved = false;
  return true;
}

std::optional<uint64_t> PendingLog::ReservedSeq(uint64_t key) const {
  auto it = reserved_.find(key);
  if (it == reserved_.end()) return std::nullopt;
  return it->second->last_seq;
}

uint64_t PendingLog::TakeReady(std::string* out) {
  while (!chunks_.empty() && !chunks_.front().reserved) {
    Chunk& chunk = chunks_.front();
    out->append(chunk.bytes);
    ready_bytes_ -= chunk.bytes.size();
    taken_seq_ = chunk.last_seq;
    chunks_.pop_front();
  }
  return taken_seq_;
}

}  // namespace ckptfs
