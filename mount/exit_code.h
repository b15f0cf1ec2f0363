// The daemon's exit status: what a supervisor (systemd, a job script) can
// act on. Documented in docs/user-guide.md ("Exit status") and the unit
// file; a daemon killed by a signal it had no time to finish on (a second
// SIGTERM, SIGKILL) exits by that signal instead.
#pragma once

namespace ckptfs {

enum ExitCode : int {
  // Served, unmounted, everything committed flushed to the store (and, with
  // -o tier=, sent to RADOS).
  kExitClean = 0,
  // Did not mount or could not go on serving (the store would not open,
  // the mountpoint was refused, /dev/fuse failed): the reason is on stderr
  // or in the log. Nothing acknowledged was lost.
  kExitFailed = 1,
  // The command line or an option is wrong.
  kExitUsage = 2,
  // The store failed: a commit or the final flush did not reach the device.
  // What fsync acknowledged is safe; what was written since may not be.
  // Run ckptfs-fsck before mounting it again.
  kExitStoreFailed = 3,
  // Stopped with commits the RADOS tier does not hold yet (how far behind
  // is logged): the checkpoint exists only on this node until the store is
  // mounted again, which sends the rest.
  kExitNotDrained = 4,
};

}  // namespace ckptfs
