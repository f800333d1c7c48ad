// Unit tests of hearth-serve's connection register: who is shed to make
// room at a full cap (strangers oldest first, then idle members, never a
// member being served), and refusal when nobody can be.

#ifdef HEARTH_SERVE_FOUND

#include <sys/socket.h>
#include <unistd.h>

#include <vector>

#include <catch2/catch.hpp>

#include "connection_guard.h"

namespace hearth::serve {
namespace {

// A connected socket pair: the guard holds `server`; `client` reads 0 bytes
// once the guard shut the server end down.
struct Pair {
  int server = -1;
  int client = -1;
  Pair() {
    int fds[2];
    REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0);
    server = fds[0];
    client = fds[1];
  }
  ~Pair() {
    close(server);
    close(client);
  }
  bool shut_down() const {
    char byte;
    return recv(client, &byte, 1, MSG_DONTWAIT) == 0;
  }
};

TEST_CASE("connection guard: strangers go first, then idle members, never a member served",
          "[serve]") {
  ConnectionLimits limits;
  limits.max_connections = 3;
  limits.max_per_client = 100;
  ConnectionGuard guard(limits);
  std::vector<Pair> pairs(8);
  std::vector<Connection*> c;
  for (int i = 0; i < 3; ++i) c.push_back(guard.Admit(pairs[i].server));
  REQUIRE(c[0] != nullptr);
  guard.SetTrust(c[0], ConnectionTrust::kServingMember);
  guard.SetTrust(c[1], ConnectionTrust::kIdleMember);
  // c[2] stays a stranger: the newcomer sheds it, though c[1] is older.
  c.push_back(guard.Admit(pairs[3].server));
  CHECK(c[3] != nullptr);
  CHECK(pairs[2].shut_down());
  CHECK_FALSE(pairs[1].shut_down());
  CHECK_FALSE(pairs[0].shut_down());
  // The newcomer itself is now the only stranger.
  c.push_back(guard.Admit(pairs[4].server));
  CHECK(pairs[3].shut_down());
  guard.SetTrust(c[4], ConnectionTrust::kServingMember);
  // No stranger left: the idle member goes.
  c.push_back(guard.Admit(pairs[5].server));
  CHECK(pairs[1].shut_down());
  guard.SetTrust(c[5], ConnectionTrust::kServingMember);
  // Every connection serves a member: the newcomer is refused.
  CHECK(guard.Admit(pairs[6].server) == nullptr);
  CHECK_FALSE(pairs[0].shut_down());
  ConnectionStats stats = guard.Stats();
  CHECK(stats.open == 3);
  CHECK(stats.strangers == 0);
  CHECK(stats.shed == 3);
  CHECK(stats.refused == 1);
  CHECK(stats.admitted == 6);
  // Released connections make room again, shed ones included.
  for (Connection* x : c) guard.Release(x);
  CHECK(guard.Stats().open == 0);
  CHECK(guard.Admit(pairs[7].server) != nullptr);
}

TEST_CASE("connection guard: the per-client cap sheds only that client's connections",
          "[serve]") {
  // Socket pairs have no peer address: they are all one client here.
  ConnectionLimits limits;
  limits.max_connections = 100;
  limits.max_per_client = 2;
  ConnectionGuard guard(limits);
  std::vector<Pair> pairs(4);
  Connection* a = guard.Admit(pairs[0].server);
  Connection* b = guard.Admit(pairs[1].server);
  guard.SetTrust(a, ConnectionTrust::kServingMember);
  guard.SetTrust(b, ConnectionTrust::kServingMember);
  CHECK(guard.Admit(pairs[2].server) == nullptr);
  guard.SetTrust(b, ConnectionTrust::kIdleMember);
  Connection* c = guard.Admit(pairs[3].server);
  CHECK(c != nullptr);
  CHECK(pairs[1].shut_down());
  CHECK_FALSE(pairs[0].shut_down());
  // Stopping: everything not serving a member goes, at once.
  guard.ShedIdle();
  CHECK(pairs[3].shut_down());
  CHECK_FALSE(pairs[0].shut_down());
  CHECK(guard.Stats().open == 1);
  guard.Release(a);
  guard.Release(b);
  guard.Release(c);
}

}  // namespace
}  // namespace hearth::serve

#endif  // HEARTH_SERVE_FOUND
