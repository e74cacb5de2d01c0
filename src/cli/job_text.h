// How `gpuwarden job` writes a job's sizes and lengths for a person (the JSON keeps the numbers).
#pragma once

#include <string>

namespace gw::cli {

// 1536 -> "1.5 KiB"; whole bytes below 1 KiB ("512 B"); binary units up to PiB.
std::string humanBytes(double bytes);
// Rounded to whole seconds: "59s", "1m 00s", "1h 00m 01s".
std::string humanDuration(double seconds);

}  // namespace gw::cli
