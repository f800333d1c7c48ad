#include "connection_guard.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

namespace hearth::serve {

std::string PeerAddress(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return "";
  char host[NI_MAXHOST] = {};
  if (getnameinfo(reinterpret_cast<sockaddr*>(&addr), len, host, sizeof(host), nullptr, 0,
                  NI_NUMERICHOST) != 0) {
    return "";
  }
  return host;
}

bool Connection::PeerGone() const {
  pollfd p{fd_, POLLIN | POLLRDHUP, 0};
  if (poll(&p, 1, 0) <= 0) return false;
  if (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) return true;
  // Readable without a hang-up: the next request, pipelined. A zero-byte
  // peek would be an end of stream POLLRDHUP did not report.
  char byte;
  return recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

void ConnectionGuard::SetKeepAlive(int fd) const {
  const int on = 1;
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &limits_.keepalive_idle_s, sizeof(int));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &limits_.keepalive_interval_s, sizeof(int));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &limits_.keepalive_count, sizeof(int));
}

Connection* ConnectionGuard::Victim(const std::string* peer) const {
  Connection* best = nullptr;
  // A linear scan, only when a cap is full: at most max_connections
  // entries, and cheap next to the accept and thread hand-off around it.
  for (const auto& [ptr, c] : open_) {
    if (c->shed_ || c->trust_ == ConnectionTrust::kServingMember) continue;
    if (peer != nullptr && c->peer_ != *peer) continue;
    if (best == nullptr || c->trust_ < best->trust_ ||
        (c->trust_ == best->trust_ && c->since_ < best->since_)) {
      best = c.get();
    }
  }
  return best;
}

void ConnectionGuard::Shed(Connection* c) {
  c->shed_ = true;
  --live_;
  --live_per_peer_[c->peer_];
  ++stats_.shed;
  // The socket stays open (its thread closes it after Release), so this
  // cannot reach a descriptor reused by another connection.
  shutdown(c->fd_, SHUT_RDWR);
}

Connection* ConnectionGuard::Admit(int fd) {
  std::string peer = PeerAddress(fd);
  SetKeepAlive(fd);
  const absl::Time now = absl::Now();
  absl::MutexLock lock(&mu_);
  auto peer_it = live_per_peer_.find(peer);
  if (peer_it != live_per_peer_.end() && peer_it->second >= limits_.max_per_client) {
    Connection* victim = Victim(&peer);
    if (victim == nullptr) {
      ++stats_.refused;
      return nullptr;
    }
    Shed(victim);
  }
  if (live_ >= limits_.max_connections) {
    Connection* victim = Victim(nullptr);
    if (victim == nullptr) {
      ++stats_.refused;
      return nullptr;
    }
    Shed(victim);
  }
  std::unique_ptr<Connection> owned(new Connection(fd, peer, now));
  Connection* c = owned.get();
  c->thread_ = std::this_thread::get_id();
  open_.emplace(c, std::move(owned));
  by_thread_[c->thread_] = c;
  ++live_;
  ++live_per_peer_[peer];
  ++stats_.admitted;
  return c;
}

void ConnectionGuard::Release(Connection* c) {
  absl::MutexLock lock(&mu_);
  auto it = open_.find(c);
  if (it == open_.end()) return;
  if (!c->shed_) {
    --live_;
    if (--live_per_peer_[c->peer_] <= 0) live_per_peer_.erase(c->peer_);
  } else if (auto p = live_per_peer_.find(c->peer_); p != live_per_peer_.end() && p->second <= 0) {
    live_per_peer_.erase(p);
  }
  by_thread_.erase(c->thread_);
  open_.erase(it);
}

Connection* ConnectionGuard::Current() const {
  absl::MutexLock lock(&mu_);
  auto it = by_thread_.find(std::this_thread::get_id());
  return it == by_thread_.end() ? nullptr : it->second;
}

void ConnectionGuard::SetTrust(Connection* c, ConnectionTrust trust) {
  absl::MutexLock lock(&mu_);
  if (c->trust_ == trust) return;
  c->trust_ = trust;
  c->since_ = absl::Now();
}

void ConnectionGuard::ShedIdle() {
  absl::MutexLock lock(&mu_);
  for (const auto& [ptr, c] : open_) {
    if (!c->shed_ && c->trust_ != ConnectionTrust::kServingMember) Shed(c.get());
  }
}

void ConnectionGuard::CountTimeout(bool head) {
  absl::MutexLock lock(&mu_);
  ++(head ? stats_.head_timeouts : stats_.body_timeouts);
}

ConnectionStats ConnectionGuard::Stats() const {
  absl::MutexLock lock(&mu_);
  ConnectionStats s = stats_;
  s.open = live_;
  s.strangers = 0;
  for (const auto& [ptr, c] : open_) {
    if (!c->shed_ && c->trust_ == ConnectionTrust::kStranger) ++s.strangers;
  }
  return s;
}

}  // namespace hearth::serve
