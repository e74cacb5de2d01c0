// HTTP basic authentication against bcrypt hashes (the basic_auth_users of a Prometheus
// exporter's web configuration). bcrypt is slow on purpose (~50 ms at cost 10), which an attacker
// could turn against the node, and its cost must not tell right from wrong. So:
//  - every first sight of a (user, password) pair costs one bcrypt, whether the user exists (an
//    unknown user is checked against a dummy hash of the same cost), and the outputs are compared
//    in constant time;
//  - the verdict, right or wrong, is remembered under a keyed SHA-256 of the pair (never the
//    password), so a scraper's repeated credentials, and an attacker's repeated guess, cost a
//    lookup; the memory is bounded, and guesses cannot push right credentials out;
//  - at most one bcrypt runs at a time and nobody waits for it: a check that finds another in
//    progress is told to retry (503), so guesses take at most one core and one event-loop
//    thread, never all of them.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "common/result.h"

namespace gw::server {

class BasicAuth {
 public:
  enum class Verdict { Ok, Missing, Malformed, Denied, Busy };
  struct Outcome {
    Verdict verdict = Verdict::Missing;
    std::string user;  // when Ok
  };

  // users: name -> bcrypt hash ($2a$, $2b$ or $2y$). Fails on a malformed hash.
  static Result<std::unique_ptr<BasicAuth>> create(const std::map<std::string, std::string>& users);
  ~BasicAuth();

  // Checks an Authorization header value.
  Outcome check(std::string_view authorization);

  static constexpr std::size_t kMaxHeader = 4096;
  static constexpr std::size_t kCacheEntries = 4096;

  struct Impl;

 private:
  explicit BasicAuth(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// A bcrypt hash is "$2b$NN$" and 53 characters of bcrypt's base64; the error says what is wrong.
Status checkBcryptHash(std::string_view hash);
// A new bcrypt hash of the password (gpuwarden hash-password), cost 4..31.
Result<std::string> bcryptHash(std::string_view password, int cost);
// Decodes standard base64 ('=' padding required when the length is not a multiple of 4).
Result<std::string> decodeBase64(std::string_view text);

}  // namespace gw::server
