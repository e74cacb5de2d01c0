#include "server/basic_auth.h"

#include <crypt.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>

#include <strings.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

namespace gw::server {

namespace {

constexpr std::string_view kBcryptAlphabet = "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

int bcryptCost(std::string_view hash) { return (hash[4] - '0') * 10 + (hash[5] - '0'); }

bool equalConstantTime(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  volatile unsigned char diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) diff = diff | static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

}  // namespace

Status checkBcryptHash(std::string_view h) {
  if (h.size() != 60) return Status::Error("a bcrypt hash has 60 characters, this one " + std::to_string(h.size()));
  if (h[0] != '$' || h[1] != '2' || (h[2] != 'a' && h[2] != 'b' && h[2] != 'y') || h[3] != '$' || h[6] != '$')
    return Status::Error("not a bcrypt hash (it must start with $2a$, $2b$ or $2y$ and a two-digit cost)");
  if (h[4] < '0' || h[4] > '9' || h[5] < '0' || h[5] > '9') return Status::Error("the cost must be two digits");
  const int cost = bcryptCost(h);
  if (cost < 4 || cost > 31) return Status::Error("the cost must be 4..31, not " + std::to_string(cost));
  for (char c : h.substr(7))
    if (kBcryptAlphabet.find(c) == std::string_view::npos)
      return Status::Error("a character outside bcrypt's alphabet in the salt or digest");
  return Status::Ok();
}

Result<std::string> decodeBase64(std::string_view in) {
  if (in.size() % 4 != 0) return Status::Error("base64 length is not a multiple of 4");
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  out.reserve(in.size() / 4 * 3);
  for (std::size_t i = 0; i < in.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = in[i + k];
      if (c == '=' && i + 4 == in.size() && k >= 2) {
        v[k] = 0;
        ++pad;
        continue;
      }
      if (pad > 0) return Status::Error("base64 padding in the middle");
      v[k] = value(c);
      if (v[k] < 0) return Status::Error("a character outside base64");
    }
    const unsigned n = (unsigned(v[0]) << 18) | (unsigned(v[1]) << 12) | (unsigned(v[2]) << 6) | unsigned(v[3]);
    out.push_back(static_cast<char>((n >> 16) & 0xff));
    if (pad < 2) out.push_back(static_cast<char>((n >> 8) & 0xff));
    if (pad < 1) out.push_back(static_cast<char>(n & 0xff));
  }
  return out;
}

Result<std::string> bcryptHash(std::string_view password, int cost) {
  if (cost < 4 || cost > 31) return Status::Error("bcrypt cost must be 4..31");
  if (password.find('\0') != std::string_view::npos) return Status::Error("a password cannot contain NUL");
  char salt[CRYPT_GENSALT_OUTPUT_SIZE];
  if (!crypt_gensalt_rn("$2b$", static_cast<unsigned long>(cost), nullptr, 0, salt, sizeof salt))
    return Status::Error(std::string("cannot make a bcrypt salt: ") + std::strerror(errno));
  auto data = std::make_unique<crypt_data>();
  const std::string pw(password);
  const char* out = crypt_rn(pw.c_str(), salt, data.get(), sizeof(crypt_data));
  if (!out || out[0] == '*') return Status::Error("bcrypt is not available in this libcrypt");
  return std::string(out);
}

struct BasicAuth::Impl {
  std::map<std::string, std::string> users;
  std::string dummy;  // an unknown user's password is checked against this, at the same cost
  std::array<unsigned char, 32> key{};

  // Right and wrong verdicts apart: guesses can flood `denied` (cleared when full) but never push
  // a scraper's credentials out of `granted`, which only right passwords enter.
  std::mutex cache_mu;
  std::unordered_map<std::string, std::string> granted;  // key -> user
  std::unordered_set<std::string> denied;

  std::mutex bcrypt_mu;  // one bcrypt at a time, on this scratch space
  std::unique_ptr<crypt_data> scratch = std::make_unique<crypt_data>();

  std::string cacheKey(std::string_view user, std::string_view password) const {
    std::string material(reinterpret_cast<const char*>(key.data()), key.size());
    material.append(user);
    material.push_back('\0');
    material.append(password);
    unsigned char digest[32];
    gnutls_hash_fast(GNUTLS_DIG_SHA256, material.data(), material.size(), digest);
    std::fill(material.begin(), material.end(), '\0');
    return std::string(reinterpret_cast<const char*>(digest), sizeof digest);
  }
};

BasicAuth::BasicAuth(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
BasicAuth::~BasicAuth() = default;

Result<std::unique_ptr<BasicAuth>> BasicAuth::create(const std::map<std::string, std::string>& users) {
  auto impl = std::make_unique<Impl>();
  int cost = 0;
  for (const auto& [user, hash] : users) {
    if (Status st = checkBcryptHash(hash); !st) return Status::Error("user '" + user + "': " + st.message());
    cost = std::max(cost, bcryptCost(hash));
  }
  impl->users = users;
  if (!users.empty()) {
    auto d = bcryptHash("gpuwarden: no such user", cost);
    if (!d) return d.status();
    impl->dummy = std::move(d).value();
  }
  if (gnutls_rnd(GNUTLS_RND_KEY, impl->key.data(), impl->key.size()) != 0)
    return Status::Error("no randomness for the credential cache key");
  return std::unique_ptr<BasicAuth>(new BasicAuth(std::move(impl)));
}

BasicAuth::Outcome BasicAuth::check(std::string_view header) {
  Outcome out;
  if (header.empty()) return out;
  out.verdict = Verdict::Malformed;
  if (header.size() > kMaxHeader) return out;
  constexpr std::string_view kScheme = "Basic ";
  if (header.size() < kScheme.size() || strncasecmp(header.data(), kScheme.data(), kScheme.size()) != 0) return out;
  std::string_view b64 = header.substr(kScheme.size());
  while (!b64.empty() && b64.front() == ' ') b64.remove_prefix(1);
  while (!b64.empty() && b64.back() == ' ') b64.remove_suffix(1);
  auto decoded = decodeBase64(b64);
  if (!decoded) return out;
  const std::string& pair = *decoded;
  const auto colon = pair.find(':');
  if (colon == std::string::npos || pair.find('\0') != std::string::npos) return out;
  const std::string user = pair.substr(0, colon);
  const std::string password = pair.substr(colon + 1);

  const std::string key = impl_->cacheKey(user, password);
  {
    std::lock_guard lock(impl_->cache_mu);
    if (auto it = impl_->granted.find(key); it != impl_->granted.end()) {
      out.verdict = Verdict::Ok;
      out.user = it->second;
      return out;
    }
    if (impl_->denied.count(key)) {
      out.verdict = Verdict::Denied;
      return out;
    }
  }
  // Never wait for another check: the caller is an event-loop thread that serves other
  // connections too, so a stream of guesses must not park every loop on this lock.
  std::unique_lock lock(impl_->bcrypt_mu, std::try_to_lock);
  if (!lock.owns_lock()) {
    out.verdict = Verdict::Busy;
    return out;
  }
  const auto known = impl_->users.find(user);
  const std::string& hash = known != impl_->users.end() ? known->second : impl_->dummy;
  const char* got = crypt_rn(password.c_str(), hash.c_str(), impl_->scratch.get(), sizeof(crypt_data));
  const bool match = got && got[0] != '*' && equalConstantTime(got, hash);
  const bool ok = match && known != impl_->users.end();
  lock.unlock();
  {
    std::lock_guard cl(impl_->cache_mu);
    if (ok) {
      if (impl_->granted.size() >= kCacheEntries) impl_->granted.clear();
      impl_->granted.emplace(key, user);
    } else {
      if (impl_->denied.size() >= kCacheEntries) impl_->denied.clear();
      impl_->denied.insert(key);
    }
  }
  out.verdict = ok ? Verdict::Ok : Verdict::Denied;
  if (ok) out.user = user;
  return out;
}

}  // namespace gw::server
