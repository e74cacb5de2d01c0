#include "server/web_config.h"

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>
#include <vector>

#include "platform/regular_file.h"
#include "server/basic_auth.h"
#include "server/yaml_check.h"

namespace gw::server {

namespace {

// Keys of the exporter-toolkit format gpuwarden does not implement: refused by name, so that a
// setting is never silently ignored.
Status checkKeys(const Checker& w, const YAML::Node& map, const std::string& prefix,
                 const std::vector<std::string>& known, const std::set<std::string>& unsupported) {
  for (const auto& kv : map) {
    const std::string key = kv.first.Scalar();
    if (unsupported.count(key))
      return w.error(kv.first, prefix.empty() ? key : prefix + "." + key,
                     "is not supported by gpuwarden (see docs/config.md)");
  }
  return server::checkKeys(w, map, prefix, known);
}

Result<std::string> scalar(const Checker& w, const YAML::Node& n, const std::string& field) {
  if (!n.IsScalar()) return w.error(n, field, "expected a single value");
  return n.Scalar();
}

std::string resolve(const std::string& config_path, const std::string& name) {
  if (name.empty() || name.front() == '/') return name;
  return (std::filesystem::path(config_path).parent_path() / name).string();
}

std::string tlsVersion(const std::string& v) {
  if (v == "TLS10") return "VERS-TLS1.0";
  if (v == "TLS11") return "VERS-TLS1.1";
  if (v == "TLS12") return "VERS-TLS1.2";
  if (v == "TLS13") return "VERS-TLS1.3";
  return "";
}

// The certificate and key must belong together, and the client CA must hold certificates: asked
// of GnuTLS itself, which serves them.
Status checkWithGnutls(const TlsSettings& t) {
  gnutls_certificate_credentials_t cred = nullptr;
  if (gnutls_certificate_allocate_credentials(&cred) != GNUTLS_E_SUCCESS) return Status::Error("GnuTLS: out of memory");
  gnutls_datum_t cert{reinterpret_cast<unsigned char*>(const_cast<char*>(t.cert_pem.data())),
                      static_cast<unsigned>(t.cert_pem.size())};
  gnutls_datum_t key{reinterpret_cast<unsigned char*>(const_cast<char*>(t.key_pem.data())),
                     static_cast<unsigned>(t.key_pem.size())};
  Status out = Status::Ok();
  int rc = gnutls_certificate_set_x509_key_mem2(cred, &cert, &key, GNUTLS_X509_FMT_PEM, nullptr, 0);
  if (rc < 0) {
    out = Status::Error(t.cert_file + " and " + t.key_file +
                        " are not a PEM certificate and its private key: " + gnutls_strerror(rc));
  } else if (!t.client_ca_pem.empty()) {
    gnutls_datum_t ca{reinterpret_cast<unsigned char*>(const_cast<char*>(t.client_ca_pem.data())),
                      static_cast<unsigned>(t.client_ca_pem.size())};
    rc = gnutls_certificate_set_x509_trust_mem(cred, &ca, GNUTLS_X509_FMT_PEM);
    if (rc <= 0)
      out = Status::Error("client_ca_file " + t.client_ca_file + " holds no PEM certificate" +
                          (rc < 0 ? std::string(": ") + gnutls_strerror(rc) : std::string()));
  }
  gnutls_certificate_free_credentials(cred);
  return out;
}

Status parseTls(const Checker& w, const YAML::Node& n, const std::string& path, TlsSettings& t) {
  if (!n.IsMap()) return w.error(n, "tls_server_config", "expected a mapping");
  if (Status st =
          checkKeys(w, n, "tls_server_config",
                    {"cert_file", "key_file", "client_auth_type", "client_ca_file", "min_version", "max_version"},
                    {"cert", "key", "client_ca", "client_allowed_sans", "cipher_suites", "prefer_server_cipher_suites",
                     "curve_preferences"});
      !st)
    return st;
  for (const char* k : {"cert_file", "key_file"})
    if (!n[k]) return w.error(n, std::string("tls_server_config.") + k, "is required");
  auto file = [&](const char* key, std::string& name, std::string& pem) -> Status {
    const std::string field = std::string("tls_server_config.") + key;
    auto s = scalar(w, n[key], field);
    if (!s) return s.status();
    name = resolve(path, *s);
    auto data = platform::readRegularFile(name, kMaxWebConfigBytes, "this file");
    if (!data) return w.error(n[key], field, data.error());
    pem = std::move(data).value();
    return Status::Ok();
  };
  if (Status st = file("cert_file", t.cert_file, t.cert_pem); !st) return st;
  if (Status st = file("key_file", t.key_file, t.key_pem); !st) return st;
  std::string auth = "NoClientCert";
  if (auto a = n["client_auth_type"]; a) {
    auto s = scalar(w, a, "tls_server_config.client_auth_type");
    if (!s) return s.status();
    auth = *s;
  }
  if (auth == "NoClientCert") {
    t.client_auth = ClientAuth::None;
  } else if (auth == "VerifyClientCertIfGiven") {
    t.client_auth = ClientAuth::VerifyIfGiven;
  } else if (auth == "RequireAndVerifyClientCert") {
    t.client_auth = ClientAuth::RequireAndVerify;
  } else if (auth == "RequestClientCert" || auth == "RequireAnyClientCert") {
    return w.error(n["client_auth_type"], "tls_server_config.client_auth_type",
                   auth +
                       " accepts certificates nobody verified; use VerifyClientCertIfGiven or "
                       "RequireAndVerifyClientCert with a client_ca_file");
  } else {
    return w.error(n["client_auth_type"], "tls_server_config.client_auth_type",
                   "must be NoClientCert, VerifyClientCertIfGiven or RequireAndVerifyClientCert, got '" + auth + "'");
  }
  if (n["client_ca_file"]) {
    if (Status st = file("client_ca_file", t.client_ca_file, t.client_ca_pem); !st) return st;
    if (t.client_auth == ClientAuth::None)
      return w.error(n["client_ca_file"], "tls_server_config.client_ca_file",
                     "is given but client_auth_type is NoClientCert: say how client certificates are checked");
  } else if (t.client_auth != ClientAuth::None) {
    return w.error(n["client_auth_type"], "tls_server_config.client_auth_type", auth + " needs a client_ca_file");
  }
  std::string min = "TLS12", max = "TLS13";
  for (auto [key, out] : {std::pair{"min_version", &min}, std::pair{"max_version", &max}}) {
    if (auto v = n[key]; v) {
      auto s = scalar(w, v, std::string("tls_server_config.") + key);
      if (!s) return s.status();
      if (tlsVersion(*s).empty())
        return w.error(v, std::string("tls_server_config.") + key, "must be TLS10, TLS11, TLS12 or TLS13");
      *out = *s;
    }
  }
  if (min > max) return w.error(n["min_version"], "tls_server_config.min_version", "is above max_version");
  t.priorities = "NORMAL:-VERS-ALL";
  for (const char* v : {"TLS10", "TLS11", "TLS12", "TLS13"})
    if (v >= min && v <= max) t.priorities += ":+" + tlsVersion(v);
  if (Status st = checkWithGnutls(t); !st) return w.error(n, "tls_server_config", st.message());
  return Status::Ok();
}

}  // namespace

Result<WebConfig> parseWebConfig(std::string_view text, const std::string& path) {
  Checker w(path);
  WebConfig cfg;
  cfg.source = path;
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return Status::Error(path + ":" + std::to_string(e.mark.line + 1 > 0 ? e.mark.line + 1 : 1) + ": " + e.msg);
  }
  try {
    if (root.IsNull()) return cfg;
    if (!root.IsMap()) return w.error(root, "(top)", "expected a mapping");
    if (Status st = checkDuplicateKeys(w, root, ""); !st) return st;
    if (Status st = checkKeys(w, root, "", {"tls_server_config", "basic_auth_users", "http_server_config"}, {}); !st)
      return st;
    if (auto t = root["tls_server_config"]; t && !t.IsNull()) {
      TlsSettings tls;
      if (Status st = parseTls(w, t, path, tls); !st) return st;
      cfg.tls = std::move(tls);
    }
    if (auto u = root["basic_auth_users"]; u && !u.IsNull()) {
      if (!u.IsMap()) return w.error(u, "basic_auth_users", "expected a mapping of user: bcrypt hash");
      for (const auto& kv : u) {
        const std::string user = kv.first.Scalar();
        const std::string field = "basic_auth_users." + user;
        if (user.empty() || user.find(':') != std::string::npos)
          return w.error(kv.first, field, "a user name must be non-empty and without ':'");
        auto hash = scalar(w, kv.second, field);
        if (!hash) return hash.status();
        if (Status st = checkBcryptHash(*hash); !st)
          return w.error(kv.second, field, st.message() + " (make one with `gpuwarden hash-password`)");
        cfg.basic_auth_users[user] = *hash;
      }
    }
    if (auto h = root["http_server_config"]; h && !h.IsNull()) {
      if (!h.IsMap()) return w.error(h, "http_server_config", "expected a mapping");
      if (Status st = checkKeys(w, h, "http_server_config", {"headers"}, {"http2"}); !st) return st;
      if (auto hd = h["headers"]; hd) {
        if (!hd.IsMap()) return w.error(hd, "http_server_config.headers", "expected a mapping");
        static const std::set<std::string> kAllowed = {"Content-Security-Policy", "X-Frame-Options",
                                                       "X-Content-Type-Options", "X-XSS-Protection",
                                                       "Strict-Transport-Security"};
        for (const auto& kv : hd) {
          const std::string name = kv.first.Scalar();
          const std::string field = "http_server_config.headers." + name;
          if (!kAllowed.count(name))
            return w.error(kv.first, field,
                           "only Content-Security-Policy, X-Frame-Options, X-Content-Type-Options, "
                           "X-XSS-Protection and Strict-Transport-Security may be set");
          auto v = scalar(w, kv.second, field);
          if (!v) return v.status();
          if (v->find_first_of("\r\n") != std::string::npos || v->size() > 1024)
            return w.error(kv.second, field, "a header value is one line of at most 1024 bytes");
          cfg.headers[name] = *v;
        }
      }
    }
  } catch (const YAML::Exception& e) {
    return Status::Error(path + ":" + std::to_string(e.mark.line + 1 > 0 ? e.mark.line + 1 : 1) + ": " + e.msg);
  }
  return cfg;
}

Result<WebConfig> loadWebConfig(const std::string& path) {
  auto text = platform::readRegularFile(path, kMaxWebConfigBytes, "the web configuration");
  if (!text) return text.status();
  return parseWebConfig(*text, path);
}

}  // namespace gw::server
