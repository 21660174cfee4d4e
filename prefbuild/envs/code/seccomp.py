"""A small seccomp filter for the code sandbox, handed to bubblewrap (``--seccomp FD``).

Namespaces and rlimits already confine the code; the filter removes kernel interfaces that
sandboxed Python never needs and that widen the attack surface: creating namespaces (a
nested user namespace would let code mount unbounded tmpfs), mounting, keyrings, BPF,
ptrace, perf events, userfaultfd, kernel modules, kexec, reboot, swap, accounting. Those
calls fail with ``EPERM``; ``clone3`` fails with ``ENOSYS`` so the C library falls back to
``clone``, whose flags a classic BPF filter can inspect (``CLONE_NEWUSER`` and the other
namespace flags are refused there). System calls of another ABI (i386 ``int 0x80``, x32)
are refused wholesale, so they cannot bypass the table.

The program is classic BPF (``struct sock_filter``) built here, so no libseccomp is needed.
x86_64 numbers come from ``asm/unistd_64.h``; aarch64 uses the generic table. On other
architectures no filter is installed (the namespaces still apply).
"""

from __future__ import annotations

import errno
import platform
import struct

# struct seccomp_data offsets
_NR, _ARCH, _ARG0 = 0, 4, 16
# classic BPF opcodes
_LD_W_ABS = 0x20
_JEQ_K, _JGE_K, _JSET_K = 0x15, 0x35, 0x45
_RET_K = 0x06
RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000
X32_SYSCALL_BIT = 0x40000000
NAMESPACE_FLAGS = 0x7E020000  # CLONE_NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET

ARCHES: dict[str, tuple[int, dict[str, int]]] = {
    "x86_64": (
        0xC000003E,
        {
            "clone": 56, "clone3": 435, "ptrace": 101, "pivot_root": 155, "acct": 163, "mount": 165, "umount2": 166,
            "swapon": 167, "swapoff": 168, "reboot": 169, "init_module": 175, "delete_module": 176,
            "kexec_load": 246, "add_key": 248, "request_key": 249, "keyctl": 250, "unshare": 272,
            "perf_event_open": 298, "open_by_handle_at": 304, "setns": 308, "finit_module": 313,
            "kexec_file_load": 320, "bpf": 321, "userfaultfd": 323, "open_tree": 428, "move_mount": 429,
            "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433, "mount_setattr": 442,
        },
    ),
    "aarch64": (
        0xC00000B7,
        {
            "clone": 220, "clone3": 435, "ptrace": 117, "pivot_root": 41, "acct": 89, "mount": 40, "umount2": 39,
            "swapon": 224, "swapoff": 225, "reboot": 142, "init_module": 105, "delete_module": 106,
            "kexec_load": 104, "add_key": 217, "request_key": 218, "keyctl": 219, "unshare": 97,
            "perf_event_open": 241, "open_by_handle_at": 265, "setns": 268, "finit_module": 273,
            "kexec_file_load": 294, "bpf": 280, "userfaultfd": 282, "open_tree": 428, "move_mount": 429,
            "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433, "mount_setattr": 442,
        },
    ),
}  # fmt: skip


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def filter_program(machine: str | None = None) -> bytes | None:
    """The BPF program for ``machine`` (default: this one), or None where it has no table.

    Example:
        >>> len(filter_program("x86_64")) % 8
        0
    """
    arch = ARCHES.get(machine or platform.machine())
    if arch is None:
        return None
    audit_arch, numbers = arch
    denied = [number for name, number in numbers.items() if name not in ("clone", "clone3")]
    deny_eperm = _op(_RET_K, RET_ERRNO | errno.EPERM)
    deny_enosys = _op(_RET_K, RET_ERRNO | errno.ENOSYS)
    allow = _op(_RET_K, RET_ALLOW)
    # Layout: header, one jump per denied call, clone checks, then the return blocks.
    body: list[bytes] = []
    count = 5 + len(denied) + 4  # instructions before the returns
    allow_at, eperm_at, enosys_at = count, count + 1, count + 2

    def jump_to(target: int) -> int:
        return target - (len(body) + 1)

    body.append(_op(_LD_W_ABS, _ARCH))
    body.append(_op(_JEQ_K, audit_arch, 0, jump_to(eperm_at)))
    body.append(_op(_LD_W_ABS, _NR))
    body.append(_op(_JGE_K, X32_SYSCALL_BIT, jump_to(eperm_at), 0))
    body.append(_op(_JEQ_K, numbers["clone3"], jump_to(enosys_at), 0))
    for number in denied:
        body.append(_op(_JEQ_K, number, jump_to(eperm_at), 0))
    body.append(_op(_JEQ_K, numbers["clone"], 0, jump_to(allow_at)))
    body.append(_op(_LD_W_ABS, _ARG0))
    body.append(_op(_JSET_K, NAMESPACE_FLAGS, jump_to(eperm_at), 0))
    body.append(_op(0x05, 0))  # BPF_JA +0: fall through to allow
    assert len(body) == count
    body += [allow, deny_eperm, deny_enosys]
    return b"".join(body)
