// Who holds a store's lock, for the message of a mount that finds it busy:
// a live mount of it (refuse at once) or a process that still has it open,
// typically the previous daemon flushing after `fusermount3 -u` (wait).
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

namespace ckptfs {

// The pid holding a flock(2) on the file at `path`, from /proc/locks.
std::optional<pid_t> FlockHolder(const std::string& path);

// "pid N (COMMAND)" for a live process, or "pid N".
std::string DescribeProcess(pid_t pid);

}  // namespace ckptfs
