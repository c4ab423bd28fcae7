"""The operating-system layer of the audit sandbox: what the child gives up before rule code runs.

Translated rule code is hostile (CogRSI §4.3; SECURITY.md).  The AST policy
(:mod:`cogrsi_lib.audit.policy`) is the first layer; this module is the second, applied by the
sandbox child (:mod:`cogrsi_lib.audit.child`) after it has read its input and before it
compiles the code:

1. when the child runs as root, it becomes an unprivileged user (uid and gid 65534, no
   supplementary groups), so resource limits such as ``RLIMIT_NPROC`` bind;
2. it stops being dumpable (no ``ptrace`` or ``/proc/<pid>/mem`` from a sibling);
3. a seccomp-bpf filter (via libseccomp) sets no-new-privileges and leaves only the system
   calls a running interpreter needs: memory, signals' return, clocks, reading, writing to
   the result descriptor, exit.  Process creation, exec, signals, tracing, sockets and every
   call that opens, creates, renames, truncates or removes a file end the process at once
   (``SIGSYS``, recorded by the parent as a forbidden system call); anything else not listed
   fails with ``EPERM``.

Standard library plus ``pyseccomp`` (a ctypes binding of the system's libseccomp), which
must be imported before the limits on open files apply.
"""

from __future__ import annotations

import ctypes
import errno
import os
from dataclasses import dataclass

try:  # a missing libseccomp is reported by :func:`isolate`, not at import
    import pyseccomp as seccomp
except (ImportError, OSError, AttributeError, TypeError) as exc:  # pragma: no cover - platform
    seccomp = None
    _SECCOMP_MISSING = f"libseccomp unavailable ({type(exc).__name__}: {exc})"
else:
    _SECCOMP_MISSING = ""

#: The unprivileged user and group a root child becomes (``nobody``/``nogroup``).
UNPRIVILEGED_ID = 65534

#: System calls a running interpreter needs once its input is read (``write`` is allowed only
#: on the result descriptor).
ALLOWED_SYSCALLS = (
    "read", "close", "brk", "mmap", "munmap", "mremap", "mprotect", "madvise",
    "rt_sigreturn", "rt_sigaction", "rt_sigprocmask", "sigaltstack", "restart_syscall",
    "futex", "sched_yield", "clock_gettime", "clock_getres", "gettimeofday", "getrusage",
    "getpid", "gettid", "getuid", "geteuid", "getgid", "getegid", "getgroups", "getresuid",
    "getresgid", "exit", "exit_group",
)  # fmt: skip

#: System calls whose use is hostile by itself: the process is killed (``SIGSYS``).
KILLED_SYSCALLS = (
    # processes and programs
    "fork", "vfork", "clone", "clone3", "execve", "execveat", "setsid", "setpgid",
    # signals to anyone, tracing, other processes' memory
    "kill", "tkill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo", "pidfd_open",
    "pidfd_send_signal", "pidfd_getfd", "ptrace", "process_vm_readv", "process_vm_writev",
    # network
    "socket", "socketpair", "connect", "bind", "listen", "accept", "accept4", "sendto",
    "sendmsg", "sendmmsg", "recvfrom", "recvmsg",
    # the file system: opening, creating, renaming, truncating, removing, changing
    "open", "openat", "openat2", "creat", "open_by_handle_at", "name_to_handle_at",
    "rename", "renameat", "renameat2", "unlink", "unlinkat", "mkdir", "mkdirat", "rmdir",
    "symlink", "symlinkat", "link", "linkat", "mknod", "mknodat", "truncate", "ftruncate",
    "fallocate", "chmod", "fchmod", "fchmodat", "chown", "fchown", "lchown", "fchownat",
    "utime", "utimes", "utimensat", "futimesat", "setxattr", "lsetxattr", "fsetxattr",
    "removexattr", "lremovexattr", "fremovexattr", "chdir", "fchdir", "chroot",
    # privileges, namespaces, the kernel
    "setuid", "setgid", "setreuid", "setregid", "setresuid", "setresgid", "setgroups",
    "setfsuid", "setfsgid", "capset", "unshare", "setns", "mount", "umount2", "pivot_root",
    "bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter",
    "io_uring_register", "memfd_create", "keyctl", "add_key", "request_key",
    "init_module", "finit_module", "delete_module", "kexec_load", "reboot", "swapon", "swapoff",
)  # fmt: skip

_PR_SET_DUMPABLE = 4


class IsolationError(RuntimeError):
    """The child could not give up what it must before running untrusted code."""


@dataclass(frozen=True)
class Isolation:
    """What the child gave up; ``describe()`` goes into every run's record."""

    uid: int
    privileges_dropped: bool
    seccomp: bool

    def describe(self) -> str:
        who = f"uid {self.uid}" + (" (was root)" if self.privileges_dropped else "")
        return f"{who}; " + ("seccomp allow-list" if self.seccomp else "no seccomp filter")


def drop_privileges() -> bool:
    """As root, become the unprivileged user with no groups; ``False`` when not root."""
    if os.geteuid() != 0:
        return False
    os.setgroups([])
    os.setresgid(UNPRIVILEGED_ID, UNPRIVILEGED_ID, UNPRIVILEGED_ID)
    os.setresuid(UNPRIVILEGED_ID, UNPRIVILEGED_ID, UNPRIVILEGED_ID)
    if os.getresuid() != (UNPRIVILEGED_ID,) * 3 or os.getgroups():
        raise IsolationError("privileges were not dropped")
    return True


def set_not_dumpable() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise IsolationError(f"prctl(PR_SET_DUMPABLE): {os.strerror(ctypes.get_errno())}")


def _add(filt: object, action: int, name: str, *args: object) -> None:
    try:
        filt.add_rule(action, name, *args)  # type: ignore[attr-defined]
    except (OSError, ValueError):  # not a system call of this architecture
        return


def install_syscall_filter(result_fd: int) -> None:
    """Load the seccomp allow-list; the process can then write only to ``result_fd``."""
    if seccomp is None:
        raise IsolationError(_SECCOMP_MISSING)
    filt = seccomp.SyscallFilter(defaction=seccomp.ERRNO(errno.EPERM))
    for name in ALLOWED_SYSCALLS:
        _add(filt, seccomp.ALLOW, name)
    _add(filt, seccomp.ALLOW, "write", seccomp.Arg(0, seccomp.EQ, result_fd))
    for name in KILLED_SYSCALLS:
        _add(filt, seccomp.KILL_PROCESS, name)
    filt.load()  # libseccomp sets no-new-privileges first


def seccomp_problem() -> str:
    """Empty when the filter can be built here, else why not."""
    return _SECCOMP_MISSING
