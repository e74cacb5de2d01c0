#include "events/gpu_event.h"

namespace gw::events {

const char* eventKindName(EventKind k) {
  switch (k) {
    case EventKind::Xid:
      return "xid";
    case EventKind::SXid:
      return "sxid";
    case EventKind::EccSingleBit:
      return "ecc_sbe";
    case EventKind::EccDoubleBit:
      return "ecc_dbe";
    case EventKind::PState:
      return "pstate";
    case EventKind::Clock:
      return "clock";
    case EventKind::FallenOffBus:
      return "fallen_off_bus";
  }
  return "unknown";
}

const char* eventSourceName(EventSource s) {
  switch (s) {
    case EventSource::Nvml:
      return "nvml";
    case EventSource::KernelLog:
      return "kernel_log";
  }
  return "unknown";
}

}  // namespace gw::events
