// The kernel log as an event source (R26): follows /dev/kmsg under the filesystem root.
//
// Two kinds of /dev/kmsg:
//  - the real character device: each read() returns one record "prio,seq,usec,flags;message\n"
//    (continuation lines start with a space); EPIPE means records were overwritten before we read
//    them (counted, reading continues with the oldest record still there); poll() says when more
//    arrive.
//  - a plain file (a test root, or a saved dmesg): read line by line, polled for growth; a line
//    without its newline yet waits for the rest.
//  - a FIFO (or another file that cannot seek): read as a stream, polled; no position is kept.
// A line longer than kMaxKernelLineBytes is cut there (the event's raw text ends with
// kTruncatedMarker, `truncated` counts it) and the rest of it is skipped without being held.
//
// Position kept across restarts: with a state directory, the last kmsg sequence number (device,
// plus the boot id so that a reboot starts over) or the byte offset and inode (plain file) is
// written to position_path (node::DataDir::kmsgPosition()) after every batch. On restart records with a sequence
// number ≤ the saved one are skipped; a plain file resumes at the saved offset unless it shrank
// or was replaced, in which case it is read from the start. The file is replaced atomically; a
// save the disk refuses keeps the previous position and is retried at the next poll. A position
// file that is there but unreadable is kept aside and the log followed from its end (a replay
// would reopen handled Xids as new incidents).
//
// A malformed NVIDIA line is skipped and counted (the last few are kept), never fatal.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/result.h"
#include "events/gpu_event.h"
#include "events/kmsg_device.h"
#include "events/kmsg_parser.h"
#include "events/line_reader.h"
#include "platform/fs_root.h"

namespace gw::events {

// PCI bus id in NVML's form ("00000000:3B:00.0") → (GPU index, UUID); (-1, "") when unknown.
using BusIdLookup = std::function<std::pair<int, std::string>(const std::string& bus_id)>;

struct KmsgSourceOptions {
  std::string position_path;  // the file the position is kept in; empty: not kept
  BusIdLookup lookup;         // may be empty
  unsigned poll_ms = 200;     // how often a plain file is checked for growth; device poll timeout
  std::size_t keep_malformed = 10;
};

struct KmsgSourceStats {
  std::uint64_t lines = 0;                 // records / lines read (continuation lines not counted)
  std::uint64_t events = 0;                // published (or returned by scanOnce)
  std::uint64_t malformed = 0;             // NVIDIA lines the parser could not read
  std::uint64_t irrelevant = 0;            // not NVIDIA events
  std::uint64_t mappings = 0;              // "GPU at PCI:...: GPU-uuid" lines
  std::uint64_t skipped = 0;               // records at or before the saved position
  std::uint64_t overwritten = 0;           // EPIPE: records lost before we could read them
  std::uint64_t oversized = 0;             // EINVAL: a record larger than the read buffer, passed over
  std::uint64_t restarts = 0;              // plain file shrank or was replaced: read from the start
  std::uint64_t truncated = 0;             // lines cut at kMaxKernelLineBytes
  std::deque<std::string> last_malformed;  // newest last
};

class KmsgSource {
 public:
  // bus may be null (scanOnce only).
  KmsgSource(platform::FsRoot root, EventBus* bus, KmsgSourceOptions options = {});
  ~KmsgSource();
  KmsgSource(const KmsgSource&) = delete;
  KmsgSource& operator=(const KmsgSource&) = delete;

  // Opens /dev/kmsg under the root, loads the saved position and starts following. Fails when
  // the file cannot be opened.
  Status start();
  void stop();  // returns within about poll_ms; saves the position
  bool running() const { return running_.load(); }
  bool healthy() const { return healthy_.load(); }
  std::string lastError() const;

  // One pass over what is there now, from the start, without following, publishing or touching
  // the saved position (for `gpuwarden events` when no agent runs). Counters are updated.
  Result<std::vector<GpuEvent>> scanOnce();

  KmsgSourceStats stats() const;
  std::string statePath() const;

  // Handles one line (a kmsg record's first line, or a plain-file line): parse, count, map.
  // Public for tests; returns the event, if the line is one.
  std::optional<GpuEvent> handleLine(std::string_view line, bool from_device);

 private:
  struct Position {
    bool device = false;
    std::optional<std::uint64_t> seq;  // device
    std::string boot_id;               // device
    std::uint64_t offset = 0;          // plain file
    std::uint64_t inode = 0;           // plain file
  };

  void run();
  void followDevice();
  void followFile();
  bool readFileLines(int fd, bool publish, std::vector<GpuEvent>* out);
  void handleFileLine(std::string_view line, bool truncated, bool publish, std::vector<GpuEvent>* out);
  void loadPosition();
  bool savePosition();  // false when the file could not be written (the old one stays)
  std::string bootId() const;
  bool waitStop(unsigned ms);
  void emit(GpuEvent e, bool publish, std::vector<GpuEvent>* out);
  void countUnread(KmsgReadOutcome why);  // kLost / kSkipped

  platform::FsRoot root_;
  EventBus* bus_;
  KmsgSourceOptions opt_;

  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> running_{false};
  std::atomic<bool> healthy_{true};
  mutable std::mutex mu_;  // stats_, last_error_, learned_, cv
  std::condition_variable cv_;
  KmsgSourceStats stats_;
  std::string last_error_;
  std::map<std::string, std::string> learned_;  // bus id → UUID from "GPU at PCI:" lines (kMaxLearned)
  Position pos_;                                // thread-owned while running
  bool position_unknown_ = false;               // the position file was there but unreadable
  int fd_ = -1;
  BoundedLines lines_;   // plain file / FIFO: a partial last line
  bool stream_ = false;  // a FIFO: read(), no offsets, no saved position
};

}  // namespace gw::events
