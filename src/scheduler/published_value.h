// File: src/scheduler/published_value.h
//
// `PublishedValue<T>` hands a small trivially copyable value from one writer
// thread (the engine) to any number of reader threads without a lock: a
// sequence lock whose payload lives in relaxed atomic words, so neither side
// races in the C++ memory model (and ThreadSanitizer agrees). The writer
// never waits; a reader that overlaps a Store retries until it copies a
// value no Store was changing.

#ifndef HEARTH_SCHEDULER_PUBLISHED_VALUE_H_
#define HEARTH_SCHEDULER_PUBLISHED_VALUE_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <thread>
#include <type_traits>

namespace hearth::internal {

template <typename T>
class PublishedValue {
  static_assert(std::is_trivially_copyable_v<T>, "published by copying its bytes");

 public:
  PublishedValue() { Store(T{}); }

  // One writer thread at a time.
  void Store(const T& value) {
    std::array<uint64_t, kWords> words{};
    std::memcpy(words.data(), &value, sizeof(T));
    const uint64_t seq = seq_.load(std::memory_order_relaxed);
    seq_.store(seq + 1, std::memory_order_relaxed);  // Odd: a Store is under way.
    std::atomic_thread_fence(std::memory_order_release);
    for (size_t i = 0; i < kWords; ++i) words_[i].store(words[i], std::memory_order_relaxed);
    seq_.store(seq + 2, std::memory_order_release);
  }

  // Any thread.
  T Load() const {
    std::array<uint64_t, kWords> words{};
    for (;;) {
      const uint64_t before = seq_.load(std::memory_order_acquire);
      if (before % 2 == 0) {
        for (size_t i = 0; i < kWords; ++i) words[i] = words_[i].load(std::memory_order_relaxed);
        std::atomic_thread_fence(std::memory_order_acquire);
        if (seq_.load(std::memory_order_relaxed) == before) break;
      }
      std::this_thread::yield();
    }
    T value;
    std::memcpy(static_cast<void*>(&value), words.data(), sizeof(T));
    return value;
  }

 private:
  static constexpr size_t kWords = (sizeof(T) + sizeof(uint64_t) - 1) / sizeof(uint64_t);
  std::atomic<uint64_t> seq_{0};
  std::array<std::atomic<uint64_t>, kWords> words_{};
};

}  // namespace hearth::internal

#endif  // HEARTH_SCHEDULER_PUBLISHED_VALUE_H_
