// The web configuration (TLS, basic auth) as read and checked at start, and the basic-auth check
// itself: the verdicts, the remembered ones, and the malformed headers an attacker sends.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <thread>
#include <fstream>

#include "../support/temp_dir.h"
#include "server/basic_auth.h"
#include "server/web_config.h"

namespace gw::server {
namespace {

std::string b64(const std::string& s) {
  static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < s.size(); i += 3) {
    const unsigned n = (unsigned char)s[i] << 16 | (unsigned char)s[i + 1] << 8 | (unsigned char)s[i + 2];
    out += {k[n >> 18 & 63], k[n >> 12 & 63], k[n >> 6 & 63], k[n & 63]};
  }
  if (s.size() - i == 1) {
    const unsigned n = (unsigned char)s[i] << 16;
    out += {k[n >> 18 & 63], k[n >> 12 & 63], '=', '='};
  } else if (s.size() - i == 2) {
    const unsigned n = (unsigned char)s[i] << 16 | (unsigned char)s[i + 1] << 8;
    out += {k[n >> 18 & 63], k[n >> 12 & 63], k[n >> 6 & 63], '='};
  }
  return out;
}

TEST(Base64, DecodesAndRefusesWhatIsNotBase64) {
  for (const std::string& s :
       std::vector<std::string>{"", "a", "ab", "abc", "user:pass", std::string("\0\xff:\x01", 4)})
    EXPECT_EQ(*decodeBase64(b64(s)), s);
  for (const char* bad : {"abc", "ab=c", "a===", "=abc", "ab!d", "YWJj\n"}) EXPECT_FALSE(decodeBase64(bad)) << bad;
}

TEST(BcryptHash, MadeAndChecked) {
  auto h = bcryptHash("s3cret", 4);
  ASSERT_TRUE(h) << h.error();
  EXPECT_TRUE(h->starts_with("$2b$04$"));
  EXPECT_TRUE(checkBcryptHash(*h));
  EXPECT_FALSE(bcryptHash("x", 3));
  EXPECT_FALSE(checkBcryptHash("$1$abc"));
  EXPECT_FALSE(checkBcryptHash(h->substr(0, 59)));
  std::string cost99 = *h;
  cost99[4] = '9';
  cost99[5] = '9';
  EXPECT_NE(checkBcryptHash(cost99).message().find("4..31"), std::string::npos);
}

// Each way a stored hash can be malformed, named by its own sentence; the cost at its bounds.
TEST(BcryptHash, EachDefectIsNamed) {
  const std::string good = "$2y$10$" + std::string(53, 'A');
  ASSERT_TRUE(checkBcryptHash(good)) << checkBcryptHash(good).message();
  auto with = [&](std::size_t at, char c) {
    std::string h = good;
    h[at] = c;
    return checkBcryptHash(h);
  };
  auto message = [](const Status& st) { return st ? std::string("accepted") : st.message(); };
  for (char variant : {'a', 'b', 'y'}) EXPECT_TRUE(with(2, variant)) << variant;
  const std::string not_bcrypt = "not a bcrypt hash (it must start with $2a$, $2b$ or $2y$ and a two-digit cost)";
  EXPECT_EQ(message(with(0, '#')), not_bcrypt);
  EXPECT_EQ(message(with(1, '1')), not_bcrypt);
  EXPECT_EQ(message(with(2, 'x')), not_bcrypt);
  EXPECT_EQ(message(with(3, '1')), not_bcrypt);
  EXPECT_EQ(message(with(6, 'A')), not_bcrypt);
  for (std::size_t at : {4, 5})
    for (char c : {'/', ':', 'a'}) EXPECT_EQ(message(with(at, c)), "the cost must be two digits") << at << c;
  auto cost = [&](const char* two) {
    std::string h = good;
    h[4] = two[0];
    h[5] = two[1];
    return checkBcryptHash(h);
  };
  EXPECT_TRUE(cost("04"));
  EXPECT_TRUE(cost("31"));
  EXPECT_EQ(message(cost("03")), "the cost must be 4..31, not 3");
  EXPECT_EQ(message(cost("32")), "the cost must be 4..31, not 32");
  EXPECT_EQ(message(with(7, '+')), "a character outside bcrypt's alphabet in the salt or digest");
  EXPECT_EQ(message(with(59, '=')), "a character outside bcrypt's alphabet in the salt or digest");
  EXPECT_TRUE(with(59, '.'));
  EXPECT_TRUE(with(7, '9'));
  EXPECT_EQ(message(checkBcryptHash(good + "A")), "a bcrypt hash has 60 characters, this one 61");
}

TEST(BasicAuth, VerdictsForRightWrongUnknownAndMalformed) {
  auto auth = BasicAuth::create({{"prom", *bcryptHash("s3cret", 4)}, {"ops", *bcryptHash("other", 4)}});
  ASSERT_TRUE(auth) << auth.error();
  BasicAuth& a = **auth;
  using V = BasicAuth::Verdict;
  auto ok = a.check("Basic " + b64("prom:s3cret"));
  EXPECT_EQ(ok.verdict, V::Ok);
  EXPECT_EQ(ok.user, "prom");
  EXPECT_EQ(a.check("basic   " + b64("ops:other") + " ").verdict, V::Ok);  // scheme is case-insensitive
  EXPECT_EQ(a.check("Basic " + b64("prom:wrong")).verdict, V::Denied);
  EXPECT_EQ(a.check("Basic " + b64("prom:other")).verdict, V::Denied);  // another user's password
  EXPECT_EQ(a.check("Basic " + b64("nobody:s3cret")).verdict, V::Denied);
  EXPECT_EQ(a.check("Basic " + b64("prom:s3cret:")).verdict, V::Denied);
  // Remembered verdicts stay what they were.
  EXPECT_EQ(a.check("Basic " + b64("prom:s3cret")).verdict, V::Ok);
  EXPECT_EQ(a.check("Basic " + b64("prom:wrong")).verdict, V::Denied);
  EXPECT_EQ(a.check("").verdict, V::Missing);
  for (const std::string& bad : std::vector<std::string>{"Bearer abc", "Basic", "Basic !!!!", "Basic " + b64("nocolon"),
                                                         "Basic " + b64(std::string("prom:s3\0cret", 12)),
                                                         "Basic " + std::string(BasicAuth::kMaxHeader, 'A')})
    EXPECT_EQ(a.check(bad).verdict, V::Malformed) << bad.substr(0, 30);
}

// The header is measured before anything is decoded: a right credential padded (with the spaces the
// check trims) to 4096 bytes is read, one byte more is refused unread.
TEST(BasicAuth, AHeaderOf4096BytesIsReadOneMoreIsNot) {
  auto auth = BasicAuth::create({{"prom", *bcryptHash("s3cret", 4)}});
  ASSERT_TRUE(auth) << auth.error();
  ASSERT_EQ(BasicAuth::kMaxHeader, 4096u);
  std::string header = "Basic " + b64("prom:s3cret");
  header.resize(4096, ' ');
  EXPECT_EQ((*auth)->check(header).verdict, BasicAuth::Verdict::Ok);
  EXPECT_EQ((*auth)->check(header + " ").verdict, BasicAuth::Verdict::Malformed);
}

// Two first-time checks at once: one runs bcrypt, the other is told to retry at once (503), so
// that guesses never park more than one event-loop thread.
TEST(BasicAuth, ACheckWhileAnotherRunsIsToldToRetryNotMadeToWait) {
  auto auth = BasicAuth::create({{"prom", *bcryptHash("s3cret", 11)}});
  ASSERT_TRUE(auth) << auth.error();
  BasicAuth& a = **auth;
  std::atomic<bool> done{false};
  BasicAuth::Verdict slow_verdict = BasicAuth::Verdict::Missing;
  std::thread slow([&] {
    slow_verdict = a.check("Basic " + b64("prom:slow-guess")).verdict;
    done = true;
  });
  bool busy = false;
  for (int i = 0; !done && !busy; ++i)
    busy = a.check("Basic " + b64("prom:guess-" + std::to_string(i))).verdict == BasicAuth::Verdict::Busy;
  slow.join();
  EXPECT_TRUE(busy || slow_verdict == BasicAuth::Verdict::Busy);
  // Once free, the right password is granted and then remembered, whatever was guessed meanwhile.
  EXPECT_EQ(a.check("Basic " + b64("prom:s3cret")).verdict, BasicAuth::Verdict::Ok);
}

// A remembered wrong guess is answered from memory even while another check holds bcrypt: a
// repeated guess costs a lookup, never a bcrypt and never a "retry".
TEST(BasicAuth, ARememberedDenialIsAnsweredWhileBcryptIsBusy) {
  auto auth = BasicAuth::create({{"prom", *bcryptHash("s3cret", 6)}});
  ASSERT_TRUE(auth) << auth.error();
  BasicAuth& a = **auth;
  using V = BasicAuth::Verdict;
  const std::string wrong = "Basic " + b64("prom:wrong");
  ASSERT_EQ(a.check(wrong).verdict, V::Denied);
  // Fresh guesses back to back: bcrypt is busy nearly all the time until `stop`.
  std::atomic<bool> stop{false};
  std::thread guesser([&] {
    for (int i = 0; !stop; ++i) (void)a.check("Basic " + b64("prom:guess-" + std::to_string(i)));
  });
  bool busy = false;  // a fresh pair told to retry: the guesser holds bcrypt
  for (int i = 0; i < 2000 && !busy; ++i)
    busy = a.check("Basic " + b64("prom:probe-" + std::to_string(i))).verdict == V::Busy;
  int denied = 0;
  for (int i = 0; i < 20; ++i) denied += a.check(wrong).verdict == V::Denied;
  stop = true;
  guesser.join();
  ASSERT_TRUE(busy);
  EXPECT_EQ(denied, 20);
}

TEST(BasicAuth, ABadHashIsRefusedNamingTheUser) {
  auto a = BasicAuth::create({{"prom", "$2b$10$tooshort"}});
  ASSERT_FALSE(a);
  EXPECT_NE(a.error().find("prom"), std::string::npos) << a.error();
}

class WebConfigFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string d = dir_.path();
    const std::string cmd = "cd '" + d +
                            "' && openssl req -x509 -newkey rsa:2048 -nodes -keyout key.pem -out cert.pem -days 1 "
                            "-subj /CN=t >/dev/null 2>&1 && openssl req -x509 -newkey rsa:2048 -nodes -keyout "
                            "other.key -out other.pem -days 1 -subj /CN=o >/dev/null 2>&1";
    if (std::system(cmd.c_str()) != 0) GTEST_SKIP() << "openssl is needed to make test certificates";
    hash_ = *bcryptHash("pw", 4);
  }
  std::string write(const std::string& name, const std::string& text) { return dir_.write(name, text); }
  testsupport::TempDir dir_{"gw-web-config"};
  std::string hash_;
};

TEST_F(WebConfigFiles, AValidFileWithRelativePaths) {
  const std::string p = write("web.yml",
                              "tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\n"
                              "  min_version: TLS13\nbasic_auth_users:\n  prom: '" +
                                  hash_ + "'\nhttp_server_config:\n  headers:\n    X-Frame-Options: deny\n");
  auto c = loadWebConfig(p);
  ASSERT_TRUE(c) << c.error();
  ASSERT_TRUE(c->tls);
  EXPECT_EQ(c->tls->cert_file, dir_.path() + "/cert.pem");
  EXPECT_NE(c->tls->cert_pem.find("BEGIN CERTIFICATE"), std::string::npos);
  EXPECT_EQ(c->tls->priorities, "NORMAL:-VERS-ALL:+VERS-TLS1.3");
  EXPECT_EQ(c->tls->client_auth, ClientAuth::None);
  EXPECT_EQ(c->basic_auth_users.at("prom"), hash_);
  EXPECT_EQ(c->headers.at("X-Frame-Options"), "deny");
  EXPECT_TRUE(c->active());
}

TEST_F(WebConfigFiles, MistakesAreRefusedWithFileLineAndField) {
  struct Case {
    std::string text, where, what;
  };
  const std::string tls = "tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\n";
  for (const auto& c : std::vector<Case>{
           {"tls_server_config:\n  cert_file: cert.pem\n", ":2: tls_server_config.key_file", "required"},
           {"tls_server_config:\n  cert_file: cert.pem\n  key_file: other.key\n",
            ":2: tls_server_config: ", "do not match"},
           {"tls_server_config:\n  cert_file: nope.pem\n  key_file: key.pem\n", ":2: tls_server_config.cert_file",
            "nope.pem"},
           {tls + "  client_auth_type: RequireAndVerifyClientCert\n", ":4: tls_server_config.client_auth_type",
            "client_ca_file"},
           {tls + "  client_ca_file: cert.pem\n", ":4: tls_server_config.client_ca_file", "NoClientCert"},
           {tls + "  client_auth_type: RequestClientCert\n", ":4: tls_server_config.client_auth_type", "verified"},
           {tls + "  min_version: TLS13\n  max_version: TLS12\n", ":4: tls_server_config.min_version", "above"},
           // min_version not written: its default (TLS12) is above max_version, and with no line of its
           // own the error points at the file's first line.
           {tls + "  max_version: TLS11\n", ":1: tls_server_config.min_version", "above"},
           {tls + "  cipher_suites: [TLS_AES_128_GCM_SHA256]\n", ":4: tls_server_config.cipher_suites",
            "not supported"},
           {tls + "  cert_fil: x\n", ":4: tls_server_config.cert_fil", "unknown key"},
           {"basic_auth_users:\n  prom: plain-text\n", ":2: basic_auth_users.prom", "bcrypt"},
           {"basic_auth_users:\n  prom: '" + hash_ + "'\n  prom: '" + hash_ + "'\n", ":3: basic_auth_users.prom",
            "duplicate"},
           {"http_server_config:\n  headers:\n    Set-Cookie: a\n", ":3: http_server_config.headers.Set-Cookie",
            "only"},
           {"http_server_config:\n  http2: true\n", ":2: http_server_config.http2", "not supported"},
           {"tls: {}\n", ":1: tls", "unknown key"},
           {"basic_auth_users: [a, b]\n", ":1: basic_auth_users", "mapping"},
       }) {
    const std::string p = write("bad.yml", c.text);
    auto r = loadWebConfig(p);
    ASSERT_FALSE(r) << c.text;
    EXPECT_NE(r.error().find(p + c.where), std::string::npos) << r.error();
    EXPECT_NE(r.error().find(c.what), std::string::npos) << r.error();
  }
  // A header value is one line of up to 1024 bytes.
  const std::string at =
      write("h.yml", "http_server_config:\n  headers:\n    X-Frame-Options: '" + std::string(1024, 'd') + "'\n");
  auto fits = loadWebConfig(at);
  ASSERT_TRUE(fits) << fits.error();
  EXPECT_EQ(fits->headers.at("X-Frame-Options").size(), 1024u);
  const std::string past =
      write("h.yml", "http_server_config:\n  headers:\n    X-Frame-Options: '" + std::string(1025, 'd') + "'\n");
  auto over = loadWebConfig(past);
  ASSERT_FALSE(over);
  EXPECT_NE(over.error().find(":3: http_server_config.headers.X-Frame-Options"), std::string::npos) << over.error();
  EXPECT_NE(over.error().find("at most 1024 bytes"), std::string::npos) << over.error();
  auto dir = loadWebConfig(dir_.path());
  ASSERT_FALSE(dir);
  EXPECT_NE(dir.error().find("regular file"), std::string::npos) << dir.error();
}

// The web configuration and each PEM file it names are read up to a mebibyte: a file of exactly
// 1 MiB is read, one byte more is refused with both sizes.
TEST_F(WebConfigFiles, FilesOfAMebibyteAreReadOneByteMoreIsNot) {
  ASSERT_EQ(kMaxWebConfigBytes, 1048576u);
  std::string text = "basic_auth_users:\n  prom: '" + hash_ + "'\n";
  const auto padded = [](std::string t, std::size_t size) {
    while (t.size() + 83 <= size) t += "#" + std::string(79, 'x') + "\n";
    t += "#" + std::string(size - t.size() - 2, 'x') + "\n";
    return t;
  };
  const std::string at = write("big.yml", padded(text, 1048576));
  auto fits = loadWebConfig(at);
  ASSERT_TRUE(fits) << fits.error();
  EXPECT_EQ(fits->basic_auth_users.at("prom"), hash_);
  const std::string past = write("big.yml", padded(text, 1048577));
  auto over = loadWebConfig(past);
  ASSERT_FALSE(over);
  EXPECT_NE(over.error().find("1048577 bytes; at most 1048576"), std::string::npos) << over.error();

  // A certificate file padded (PEM readers skip text around the blocks) to the same sizes.
  std::ifstream in(dir_.path() + "/cert.pem");
  std::string pem((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(pem.empty());
  const std::string web = "tls_server_config:\n  cert_file: padded.pem\n  key_file: key.pem\n";
  write("padded.pem", padded(pem, 1048576));
  auto cert_fits = loadWebConfig(write("tls.yml", web));
  ASSERT_TRUE(cert_fits) << cert_fits.error();
  write("padded.pem", padded(pem, 1048577));
  auto cert_over = loadWebConfig(write("tls.yml", web));
  ASSERT_FALSE(cert_over);
  EXPECT_NE(cert_over.error().find("1048577 bytes; at most 1048576"), std::string::npos) << cert_over.error();
}

}  // namespace
}  // namespace gw::server
