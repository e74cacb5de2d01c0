// Splits a byte stream into lines with a bound on what is held: a kernel-log line longer than the
// bound is handed over once, cut at the bound, and the rest of it up to its newline is skipped as
// it arrives, never buffered. Used by the kernel-log source and `xid scan` (docs/events.md).
#pragma once

#include <cstddef>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

namespace gw::events {

// The longest kernel-log line kept (the kernel's own records are at most 8 KiB).
inline constexpr std::size_t kMaxKernelLineBytes = 16 * 1024;
// Appended to the raw text of an event read from a line that was cut.
inline constexpr std::string_view kTruncatedMarker = " [gpuwarden: line truncated]";

class BoundedLines {
 public:
  explicit BoundedLines(std::size_t max_line = kMaxKernelLineBytes) : max_(max_line == 0 ? 1 : max_line) {}

  // Feeds bytes; calls on_line(std::string_view line, bool truncated) for every line completed
  // (without its '\n'). A line reaching more than max_line bytes is handed over at that moment
  // with truncated = true, cut to max_line bytes.
  template <class F>
  void feed(std::string_view data, F&& on_line) {
    while (!data.empty()) {
      const auto nl = data.find('\n');
      if (skipping_) {
        if (nl == std::string_view::npos) return;  // still inside the long line: dropped
        data.remove_prefix(nl + 1);
        skipping_ = false;
        continue;
      }
      const std::size_t take = nl == std::string_view::npos ? data.size() : nl;
      if (partial_.size() + take > max_) {
        partial_.append(data.substr(0, max_ - partial_.size()));
        on_line(std::string_view(partial_), true);
        partial_.clear();
        if (nl == std::string_view::npos) {
          skipping_ = true;
          return;
        }
        data.remove_prefix(nl + 1);
        continue;
      }
      if (nl == std::string_view::npos) {
        partial_.append(data);
        return;
      }
      if (partial_.empty()) {
        on_line(data.substr(0, nl), false);
      } else {
        partial_.append(data.substr(0, nl));
        on_line(std::string_view(partial_), false);
        partial_.clear();
      }
      data.remove_prefix(nl + 1);
    }
  }

  // The end of the input: a last line without its newline is handed over.
  template <class F>
  void finish(F&& on_line) {
    if (!partial_.empty()) on_line(std::string_view(partial_), false);
    reset();
  }

  void reset() {
    partial_.clear();
    skipping_ = false;
  }
  // Bytes held for a line not complete yet (at most max_line).
  std::size_t pending() const { return partial_.size(); }

 private:
  std::size_t max_;
  std::string partial_;
  bool skipping_ = false;
};

// Reads `in` to its end in fixed-size chunks, handing every line to on_line(line, truncated).
template <class F>
void forEachBoundedLine(std::istream& in, F&& on_line, std::size_t max_line = kMaxKernelLineBytes) {
  BoundedLines lines(max_line);
  std::vector<char> buf(64 * 1024);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const auto n = in.gcount();
    if (n <= 0) break;
    lines.feed(std::string_view(buf.data(), static_cast<std::size_t>(n)), on_line);
  }
  lines.finish(on_line);
}

}  // namespace gw::events
