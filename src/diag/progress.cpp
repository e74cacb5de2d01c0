#include "diag/progress.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace gw::diag {

std::string TextProgress::formatEta(double seconds) {
  long s = seconds > 0 && std::isfinite(seconds) ? std::lround(seconds) : 0;
  char b[32];
  if (s >= 3600)
    std::snprintf(b, sizeof b, "%ld:%02ld:%02ld", s / 3600, (s / 60) % 60, s % 60);
  else
    std::snprintf(b, sizeof b, "%ld:%02ld", s / 60, s % 60);
  return b;
}

std::string TextProgress::bar(double fraction, int width) {
  fraction = std::clamp(fraction, 0.0, 1.0);
  int full = static_cast<int>(fraction * width + 1e-9);
  return "[" + std::string(full, '#') + std::string(width - full, '.') + "]";
}

void TextProgress::clearLine() {
  if (interactive_ && drawn_) {
    out_ << "\r\033[K";
    drawn_ = false;
  }
}

void TextProgress::stepStarted(int index, int count, const std::string& title, double estimate) {
  std::lock_guard<std::mutex> lk(mu_);
  if (interactive_) return;
  char b[64];
  std::snprintf(b, sizeof b, "(~%s)", formatEta(estimate).c_str());
  out_ << "diag: step " << index << "/" << count << ": " << title << " " << b << "\n";
  out_.flush();
}

void TextProgress::progress(double fraction, double eta_seconds, const std::string& activity) {
  std::lock_guard<std::mutex> lk(mu_);
  if (!interactive_) return;
  auto now = std::chrono::steady_clock::now();
  if (drawn_ && now - last_ < std::chrono::milliseconds(200) && fraction < 1.0) return;
  last_ = now;
  char pct[16];
  std::snprintf(pct, sizeof pct, "%3d%%", static_cast<int>(std::clamp(fraction, 0.0, 1.0) * 100));
  out_ << "\r\033[K" << bar(fraction, 30) << " " << pct << "  " << activity.substr(0, 40) << "  ETA "
       << formatEta(eta_seconds);
  out_.flush();
  drawn_ = true;
}

void TextProgress::checkDone(const Check& c) {
  std::lock_guard<std::mutex> lk(mu_);
  if (c.verdict < Verdict::Warn) return;
  clearLine();
  out_ << "diag: " << (c.verdict == Verdict::Fail ? "FAIL " : "WARN ")
       << (c.gpu >= 0 ? "GPU " + std::to_string(c.gpu) + " " : std::string()) << c.test << ": " << c.summary << "\n";
  out_.flush();
}

void TextProgress::finished(const DiagReport&) {
  std::lock_guard<std::mutex> lk(mu_);
  clearLine();
  out_.flush();
}

}  // namespace gw::diag
