#include "bench/burst/flooder.h"

#include <chrono>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "bench/common/seeded_random.h"

namespace hearth::bench {

Flooder::Flooder(Scheduler* scheduler, FlooderOptions options)
    : scheduler_(scheduler), options_(std::move(options)) {}

Flooder::~Flooder() {
  Stop();
  Join();
}

void Flooder::Start() { thread_ = std::thread([this] { Run(); }); }

void Flooder::Join() {
  if (thread_.joinable()) thread_.join();
}

void Flooder::Run() {
  SeededRandom random(options_.seed);
  const auto start = std::chrono::steady_clock::now();
  RequestSpec spec;
  spec.user = options_.user;
  uint64_t accepted = 0;
  while (accepted < static_cast<uint64_t>(options_.requests) &&
         !stop_.load(std::memory_order_relaxed)) {
    spec.prompt_tokens = static_cast<int32_t>(random.Uniform(8, 32));
    spec.max_new_tokens = static_cast<int32_t>(random.Uniform(1, 4));
    if (options_.token_ids) {
      spec.prompt_token_ids.resize(static_cast<size_t>(spec.prompt_tokens));
      for (TokenId& t : spec.prompt_token_ids) t = static_cast<TokenId>(random.Uniform(0, 31999));
    }
    ++report_.attempts;
    absl::StatusOr<RequestId> id = scheduler_->Submit(spec);
    if (id.ok()) {
      accepted_.store(++accepted, std::memory_order_relaxed);
      continue;
    }
    ++report_.rejections[std::string(absl::StatusCodeToString(id.status().code()))];
    if (absl::IsResourceExhausted(id.status())) std::this_thread::yield();
  }
  report_.accepted = accepted;
  report_.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  done_.store(true, std::memory_order_release);
}

}  // namespace hearth::bench
