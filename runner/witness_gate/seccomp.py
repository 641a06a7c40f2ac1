"""The system calls a worker never needs, refused by a seccomp filter bubblewrap installs.

A test reads, computes, forks and writes its private `/tmp`; it never mounts, loads kernel
modules, traces other processes, reads keyrings, loads BPF, opens performance counters, sets
the clock or makes namespaces of its own. Each of those is a way from the code under test to
the kernel's wider state (or to a process it should not see), so the worker's filter refuses
them with EPERM. `clone3` gets ENOSYS, which makes the C library fall back to `clone`, whose
flags a classic BPF filter can read (and refuse when they ask for a namespace); `socket` is
refused for the vsock family only.

`program(machine)` is pure: the filter as the bytes of a `struct sock_filter` array, the
form `bwrap --seccomp FD` reads. Syscall numbers are per architecture; a machine without a
table here gets no filter and `review` refuses to run there (fail closed).
"""

from __future__ import annotations

import errno
import struct

# struct seccomp_data: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6].
_NR, _ARCH, _ARG0_LOW = 0, 4, 16
_LD_W_ABS, _JEQ_K, _JGE_K, _JSET_K, _RET_K = 0x20, 0x15, 0x35, 0x45, 0x06
_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000
# CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET and NEWTIME.
NAMESPACE_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000 | 0x00000080
_X32_BIT = 0x40000000
# vsock is not network-namespaced: a socket of that family reaches the hypervisor's or the
# host's vsock services from inside the worker's empty network namespace.
AF_VSOCK = 40

REFUSED = (
    # mounts and the file systems behind them
    "mount",
    "umount2",
    "pivot_root",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "move_mount",
    "open_tree",
    "mount_setattr",
    "swapon",
    "swapoff",
    "quotactl",
    "quotactl_fd",
    "open_by_handle_at",
    "name_to_handle_at",
    "lookup_dcookie",
    # namespaces of its own, or another process's
    "unshare",
    "setns",
    # other processes' memory and descriptors
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "process_madvise",
    "pidfd_getfd",
    "kcmp",
    # the kernel itself: modules, kexec, keyrings, BPF, counters, logs, io_uring, fanotify, userfaultfd
    "init_module",
    "finit_module",
    "delete_module",
    "kexec_load",
    "kexec_file_load",
    "reboot",
    "acct",
    "syslog",
    "vhangup",
    "keyctl",
    "add_key",
    "request_key",
    "bpf",
    "perf_event_open",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "fanotify_init",
    "userfaultfd",
    "uselib",
    "iopl",
    "ioperm",
    "modify_ldt",
    # the clock
    "clock_settime",
    "clock_adjtime",
    "settimeofday",
    "adjtimex",
)

# (AUDIT_ARCH_*, x32 numbers share the table, {name: number}) per `os.uname().machine`.
# x86_64 from <asm/unistd_64.h>, aarch64 from <asm-generic/unistd.h> (seccomp_test checks both
# against the headers where the machine has them).
_TABLES: dict[str, tuple[int, bool, dict[str, int]]] = {
    "x86_64": (
        0xC000003E,
        True,
        {
            "mount": 165,
            "umount2": 166,
            "pivot_root": 155,
            "fsopen": 430,
            "fsconfig": 431,
            "fsmount": 432,
            "fspick": 433,
            "move_mount": 429,
            "open_tree": 428,
            "mount_setattr": 442,
            "swapon": 167,
            "swapoff": 168,
            "quotactl": 179,
            "quotactl_fd": 443,
            "open_by_handle_at": 304,
            "name_to_handle_at": 303,
            "lookup_dcookie": 212,
            "unshare": 272,
            "setns": 308,
            "ptrace": 101,
            "process_vm_readv": 310,
            "process_vm_writev": 311,
            "process_madvise": 440,
            "pidfd_getfd": 438,
            "kcmp": 312,
            "init_module": 175,
            "finit_module": 313,
            "delete_module": 176,
            "kexec_load": 246,
            "kexec_file_load": 320,
            "reboot": 169,
            "acct": 163,
            "syslog": 103,
            "vhangup": 153,
            "keyctl": 250,
            "add_key": 248,
            "request_key": 249,
            "bpf": 321,
            "perf_event_open": 298,
            "io_uring_setup": 425,
            "io_uring_enter": 426,
            "io_uring_register": 427,
            "fanotify_init": 300,
            "userfaultfd": 323,
            "uselib": 134,
            "iopl": 172,
            "ioperm": 173,
            "clock_settime": 227,
            "clock_adjtime": 305,
            "settimeofday": 164,
            "adjtimex": 159,
            "clone": 56,
            "clone3": 435,
            "modify_ldt": 154,
            "socket": 41,
        },
    ),
    "aarch64": (
        0xC00000B7,
        False,
        {
            "mount": 40,
            "umount2": 39,
            "pivot_root": 41,
            "fsopen": 430,
            "fsconfig": 431,
            "fsmount": 432,
            "fspick": 433,
            "move_mount": 429,
            "open_tree": 428,
            "mount_setattr": 442,
            "swapon": 224,
            "swapoff": 225,
            "quotactl": 60,
            "quotactl_fd": 443,
            "open_by_handle_at": 265,
            "name_to_handle_at": 264,
            "lookup_dcookie": 18,
            "unshare": 97,
            "setns": 268,
            "ptrace": 117,
            "process_vm_readv": 270,
            "process_vm_writev": 271,
            "process_madvise": 440,
            "pidfd_getfd": 438,
            "kcmp": 272,
            "init_module": 105,
            "finit_module": 273,
            "delete_module": 106,
            "kexec_load": 104,
            "kexec_file_load": 294,
            "reboot": 142,
            "acct": 89,
            "syslog": 116,
            "vhangup": 58,
            "keyctl": 219,
            "add_key": 217,
            "request_key": 218,
            "bpf": 280,
            "perf_event_open": 241,
            "io_uring_setup": 425,
            "io_uring_enter": 426,
            "io_uring_register": 427,
            "fanotify_init": 262,
            "userfaultfd": 282,
            "clock_settime": 112,
            "clock_adjtime": 266,
            "settimeofday": 170,
            "adjtimex": 171,
            "clone": 220,
            "clone3": 435,
            "socket": 198,
        },
    ),
}


def syscall_numbers(machine: str) -> dict[str, int] | None:
    """The table for `machine` (`os.uname().machine`), or None where there is none."""
    entry = _TABLES.get(machine)
    return None if entry is None else dict(entry[2])


def program(machine: str) -> bytes | None:
    """The filter for `machine` as `struct sock_filter[]` bytes, or None without a table."""
    if machine not in _TABLES:
        return None
    arch, x32, numbers = _TABLES[machine]
    refused = sorted({numbers[name] for name in REFUSED if name in numbers})
    # Instructions as (code, jump-if-true label, jump-if-false label, k); labels resolve below.
    body: list[tuple[int, str | None, str | None, int]] = [
        (_LD_W_ABS, None, None, _ARCH),
        (_JEQ_K, None, "refuse", arch),  # another ABI (i386's int 0x80 on x86_64): refused whole
        (_LD_W_ABS, None, None, _NR),
    ]
    if x32:
        body.append((_JGE_K, "refuse", None, _X32_BIT))
    body.append((_JEQ_K, "no_clone3", None, numbers["clone3"]))
    body.append((_JEQ_K, "clone", None, numbers["clone"]))
    body.append((_JEQ_K, "socket", None, numbers["socket"]))
    body += [(_JEQ_K, "refuse", None, number) for number in refused]
    body.append((_RET_K, None, None, _ALLOW))
    labels = {"clone": len(body)}
    body += [
        (_LD_W_ABS, None, None, _ARG0_LOW),
        (_JSET_K, "refuse", None, NAMESPACE_FLAGS),
        (_RET_K, None, None, _ALLOW),
    ]
    labels["socket"] = len(body)
    body += [(_LD_W_ABS, None, None, _ARG0_LOW), (_JEQ_K, "refuse", None, AF_VSOCK), (_RET_K, None, None, _ALLOW)]
    labels["no_clone3"] = len(body)
    body.append((_RET_K, None, None, _ERRNO | errno.ENOSYS))
    labels["refuse"] = len(body)
    body.append((_RET_K, None, None, _ERRNO | errno.EPERM))
    out = bytearray()
    for index, (code, if_true, if_false, k) in enumerate(body):
        jt, jf = (0 if label is None else labels[label] - index - 1 for label in (if_true, if_false))
        assert 0 <= jt < 256 and 0 <= jf < 256, "a jump past classic BPF's reach"
        out += struct.pack("=HBBI", code, jt, jf, k)
    return bytes(out)
