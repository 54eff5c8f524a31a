#!/usr/bin/env python3
"""deny-userns.py PROGRAM ARGS...: run PROGRAM under a seccomp filter that
refuses every new user namespace with EPERM, as a container runtime's
default profile or a locked-down host does: unshare(2) and clone3(2)
always, clone(2) when its flags ask for CLONE_NEWUSER.  Everything else is
allowed.  (x86_64 and aarch64.)"""
import ctypes
import os
import struct
import sys

ARCHES = {
    # machine: (AUDIT_ARCH, unshare, clone, clone3)
    "x86_64": (0xC000003E, 272, 56, 435),
    "aarch64": (0xC00000B7, 97, 220, 435),
}
CLONE_NEWUSER = 0x10000000
RET_ALLOW = 0x7FFF0000
RET_EPERM = 0x00050000 | 1
LD_W_ABS, JEQ_K, JSET_K, RET_K = 0x20, 0x15, 0x45, 0x06


def insn(code, jt, jf, k):
    return struct.pack("HBBI", code, jt, jf, k)


def program(arch, unshare, clone, clone3):
    return [
        insn(LD_W_ABS, 0, 0, 4),  # 0: seccomp_data.arch
        insn(JEQ_K, 1, 0, arch),  # 1
        insn(RET_K, 0, 0, RET_ALLOW),  # 2: another ABI: not ours to judge
        insn(LD_W_ABS, 0, 0, 0),  # 3: seccomp_data.nr
        insn(JEQ_K, 5, 0, unshare),  # 4 -> 10
        insn(JEQ_K, 4, 0, clone3),  # 5 -> 10
        insn(JEQ_K, 0, 2, clone),  # 6 -> 7, else 9
        insn(LD_W_ABS, 0, 0, 16),  # 7: args[0], low half (the flags)
        insn(JSET_K, 1, 0, CLONE_NEWUSER),  # 8 -> 10
        insn(RET_K, 0, 0, RET_ALLOW),  # 9
        insn(RET_K, 0, 0, RET_EPERM),  # 10
    ]


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: deny-userns.py PROGRAM ARGS...")
    nums = ARCHES.get(os.uname().machine)
    if nums is None:
        sys.exit("deny-userns.py: no syscall numbers for " + os.uname().machine)
    code = b"".join(program(*nums))
    buf = ctypes.create_string_buffer(code, len(code))

    class Fprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    prog = Fprog(len(code) // 8, ctypes.addressof(buf))
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong]
    if libc.prctl(38, 1, None, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        sys.exit("deny-userns.py: PR_SET_NO_NEW_PRIVS: " + os.strerror(ctypes.get_errno()))
    if libc.prctl(22, 2, ctypes.byref(prog), 0, 0) != 0:  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER
        sys.exit("deny-userns.py: PR_SET_SECCOMP: " + os.strerror(ctypes.get_errno()))
    os.execvp(sys.argv[1], sys.argv[1:])


main()
