"""Hostile programs for the sandbox fuzz: each is written so that a blocked attack raises
(or gets the interpreter killed); a program that finishes cleanly means the attack worked."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Hostile:
    family: str
    name: str
    code: str


def _raise_unless(condition: str, message: str) -> str:
    return f"if not ({condition}):\n    raise PermissionError({message!r})\n"


def hostile_programs(*, secret_name: str, port: int, canary_dir: str, host_pid: int) -> list[Hostile]:
    """Every hostile program, named; ``canary_dir`` is a host directory that must stay empty."""
    programs: list[Hostile] = []

    def add(family: str, name: str, code: str) -> None:
        programs.append(Hostile(family, name, code))

    # -- fork and process bombs
    add("fork bomb", "os.fork loop", "import os\nwhile True:\n    os.fork()")
    add(
        "fork bomb",
        "fork and sleep",
        "import os, time\nfor _ in range(10_000):\n    if os.fork() == 0:\n        time.sleep(60)",
    )
    add("fork bomb", "nested forks", "import os\nfor _ in range(64):\n    os.fork()\nraise SystemError('survived')")
    add("fork bomb", "multiprocessing pool", "import multiprocessing as mp\nmp.Pool(256).map(abs, range(10))")
    add(
        "fork bomb", "subprocess sleepers", "import subprocess\n[subprocess.Popen(['sleep', '60']) for _ in range(500)]"
    )
    add(
        "fork bomb",
        "thread bomb",
        "import threading, time\nfor _ in range(100_000):\n    threading.Thread(target=time.sleep, args=(60,)).start()",
    )
    add(
        "fork bomb",
        "shell fork bomb",
        "import subprocess\nsubprocess.run(['sh', '-c', 'f() { f | f & }; f'], check=True)"
        "\nraise SystemError('survived')",
    )
    add(
        "fork bomb",
        "fork then allocate",
        "import os\nfor _ in range(32):\n    if os.fork() == 0:\n"
        "        x = bytearray(200 << 20)\nwhile True:\n    pass",
    )
    for depth in (8, 16, 32):
        add(
            "fork bomb",
            f"double fork x{depth}",
            f"import os\nfor _ in range({depth}):\n    pid = os.fork()\n"
            "    if pid:\n        os.waitpid(pid, 0)\nraise SystemError('survived')",
        )

    # -- memory bombs
    for size in ("1 << 28", "1 << 30", "1 << 32", "1 << 36", "10 ** 12"):
        add("memory bomb", f"bytearray({size})", f"x = bytearray({size})\nx[-1] = 1")
    add("memory bomb", "list growth", "x = []\nwhile True:\n    x.append(' ' * 10 ** 6)")
    add("memory bomb", "string repeat", "x = 'a' * 10 ** 11")
    add("memory bomb", "huge int power", "x = 10 ** (10 ** 10)")
    add("memory bomb", "dict growth", "d = {}\ni = 0\nwhile True:\n    d[i] = [i] * 1000\n    i += 1")
    add("memory bomb", "numpy zeros", "import numpy\nx = numpy.ones((10 ** 6, 10 ** 5))")
    add("memory bomb", "mmap anonymous", "import mmap\nm = mmap.mmap(-1, 1 << 34)\nm[-1] = 1")
    add("memory bomb", "recursion", "def f(n):\n    return f(n + 1)\nf(0)")
    add(
        "memory bomb",
        "deep recursion, raised limit",
        "import sys\nsys.setrecursionlimit(10 ** 8)\ndef f(n):\n    return f(n + 1)\nf(0)",
    )
    add(
        "memory bomb",
        "zlib bomb",
        "import zlib\nz = zlib.compress(b'\\0' * (100 << 20))\nx = [zlib.decompress(z) for _ in range(50)]",
    )
    add("memory bomb", "bytes concat", "b = b'x'\nwhile True:\n    b += b")

    # -- infinite loops and hangs
    add("infinite loop", "while True", "while True:\n    pass")
    add("infinite loop", "iter sentinel", "for _ in iter(int, 1):\n    pass")
    add("infinite loop", "C-level sum", "sum(range(10 ** 13))")
    add("infinite loop", "sleep", "import time\ntime.sleep(10 ** 6)")
    add("infinite loop", "event wait", "import threading\nthreading.Event().wait()")
    add("infinite loop", "select forever", "import select\nselect.select([], [], [])")
    add("infinite loop", "signal.pause", "import signal\nsignal.pause()")
    add("infinite loop", "input()", "input()")
    add(
        "infinite loop",
        "stdin read",
        "import sys\ndata = sys.stdin.read()\nraise EOFError(f'stdin gave {len(data)} bytes')",
    )
    add("infinite loop", "regex backtracking", "import re\nre.match(r'(a+)+$', 'a' * 64 + 'b')")
    add(
        "infinite loop",
        "busy loop ignoring SIGXCPU",
        "import signal\nsignal.signal(signal.SIGXCPU, signal.SIG_IGN)\nwhile True:\n    pass",
    )
    add(
        "infinite loop",
        "busy threads",
        "import threading\n"
        "def spin():\n    while True:\n        pass\n"
        "for _ in range(8):\n    threading.Thread(target=spin).start()\nspin()",
    )
    add(
        "infinite loop",
        "catch every exception",
        "while True:\n    try:\n        while True:\n            pass\n    except BaseException:\n        pass",
    )
    add("infinite loop", "child keeps running", "import subprocess\nsubprocess.run(['sleep', '1000'])")
    add("infinite loop", "lock deadlock", "import threading\nlock = threading.Lock()\nlock.acquire()\nlock.acquire()")

    # -- huge output
    add("huge output", "one huge print", "print('x' * 10 ** 8)")
    add("huge output", "print loop", "while True:\n    print('spam spam spam')")
    add("huge output", "stdout.write loop", "import sys\nwhile True:\n    sys.stdout.write('y' * 4096)")
    add("huge output", "os.write loop", "import os\nwhile True:\n    os.write(1, b'z' * 65536)")
    add("huge output", "stderr loop", "import sys\nwhile True:\n    print('err', file=sys.stderr)")
    add("huge output", "child yes", "import subprocess\nsubprocess.run(['yes'], check=True)")
    add(
        "huge output",
        "binary garbage",
        "import os, sys\nsys.stdout.buffer.write(os.urandom(10 ** 8))\nsys.stdout.flush()",
    )
    add("huge output", "many newlines", "print('\\n' * 10 ** 8)")
    add("huge output", "huge exception message", "raise ValueError('boom ' * 10 ** 6)")
    add(
        "huge output", "deep traceback", "import sys\nsys.setrecursionlimit(5000)\ndef f(n):\n    return f(n + 1)\nf(0)"
    )

    # -- secrets in the environment and on disk
    env_reads = {
        "os.environ[...]": f"import os\nprint(os.environ[{secret_name!r}])",
        "os.getenv": f"import os\nv = os.getenv({secret_name!r})\n" + _raise_unless("v", "no secret in env"),
        "environ dump": "import os\nprint(dict(os.environ))\n" + _raise_unless(f"{secret_name!r} in os.environ", "no"),
        "/proc/self/environ": "d = open('/proc/self/environ', 'rb').read()\nprint(d)\n"
        + _raise_unless(f"{secret_name.encode()!r} in d", "not in /proc/self/environ"),
        "/proc/1/environ": "d = open('/proc/1/environ', 'rb').read()\nprint(d)\n"
        + _raise_unless(f"{secret_name.encode()!r} in d", "not in /proc/1/environ"),
        "/proc/<host pid>/environ": f"d = open('/proc/{host_pid}/environ', 'rb').read()\nprint(d)",
        "shell echo": f"import subprocess\nout = subprocess.run(['sh', '-c', 'echo ${secret_name}'], "
        "capture_output=True, "
        "text=True).stdout\nprint(out)\n" + _raise_unless("out.strip()", "the shell sees no secret"),
        "env binary": "import subprocess\nout = subprocess.run(['env'], capture_output=True, text=True).stdout\n"
        "print(out)\n" + _raise_unless(f"{secret_name!r} in out", "env shows no secret"),
    }
    for name, code in env_reads.items():
        add("secret", name, code)
    for pid in range(1, 9):
        add(
            "secret",
            f"/proc/{pid}/environ scan",
            f"d = open('/proc/{pid}/environ', 'rb').read()\nprint(d)\n"
            + _raise_unless(f"{secret_name.encode()!r} in d", "no secret"),
        )
    for path in (
        "/etc/shadow",
        "/root/.ssh/id_rsa",
        "/root/.bash_history",
        "/root/.cache/huggingface/token",
        "/root/.netrc",
        f"{canary_dir}/secret.txt",
        "/proc/kcore",
        "/sys/kernel/notes",
        "/home",
        "/work/main/pyproject.toml",
        "/var/log/syslog",
        "/run/secrets",
        "/proc/self/root/root/.profile",
    ):
        add(
            "secret",
            f"read {path}",
            f"import os\np = {path!r}\nprint(os.listdir(p) if os.path.isdir(p) else open(p, 'rb').read()[:200])",
        )

    # -- writes outside the sandbox
    targets = [
        "/usr",
        "/etc",
        "/work",
        "/root",
        "/bin",
        "/lib",
        "/",
        "/proc",
        "/dev",
        canary_dir,
        "/usr/local/lib",
        "/root/.pyenv",
    ]
    methods = {
        "open": "open(p + '/pwned', 'w').write('x')",
        "mkdir": "os.mkdir(p + '/pwned')",
        "symlink": "os.symlink('/tmp', p + '/pwned')",
    }
    for target in targets:
        for method, statement in methods.items():
            add("write outside", f"{method} in {target}", f"import os\np = {target!r}\n{statement}")
    add("write outside", "overwrite the python binary", "import sys\nopen(sys.executable, 'ab').write(b'x')")
    add("write outside", "chmod a system file", "import os\nos.chmod('/usr/bin/env', 0o777)")
    add("write outside", "unlink a system file", "import os\nos.unlink('/etc/ld.so.cache')")
    add("write outside", "rename the stdlib", "import os, json\nos.rename(os.path.dirname(json.__file__), '/tmp/j')")
    add("write outside", "/proc/sys write", "open('/proc/sys/kernel/hostname', 'w').write('pwned')")
    add("write outside", "/proc/sysrq-trigger", "open('/proc/sysrq-trigger', 'w').write('b')")
    add("write outside", "file over the size limit", "open('/tmp/big', 'wb').write(b'x' * (64 << 20))")
    add(
        "write outside",
        "fill /tmp",
        "i = 0\nwhile True:\n    open(f'/tmp/f{i}', 'wb').write(b'x' * (512 << 10))\n    i += 1",
    )
    add(
        "write outside",
        "fill /dev/shm",
        "i = 0\nwhile True:\n    open(f'/dev/shm/f{i}', 'wb').write(b'x' * (512 << 10))\n    i += 1",
    )
    add("write outside", "many small files", "i = 0\nwhile True:\n    open(f'/tmp/s{i}', 'w').close()\n    i += 1")

    # -- network
    add("network", "tcp to the loopback server", f"import socket\nsocket.create_connection(('127.0.0.1', {port}), 1)")
    add("network", "tcp to localhost name", f"import socket\nsocket.create_connection(('localhost', {port}), 1)")
    add("network", "ipv6 loopback", f"import socket\nsocket.create_connection(('::1', {port}), 1)")
    add(
        "network",
        "urllib to the loopback server",
        f"import urllib.request\nurllib.request.urlopen('http://127.0.0.1:{port}/', timeout=1).read()",
    )
    add(
        "network",
        "http.client",
        f"import http.client\nc = http.client.HTTPConnection('127.0.0.1', {port}, timeout=1)"
        "\nc.request('GET', '/')\nc.getresponse()",
    )
    add(
        "network",
        "udp round trip",
        f"import socket\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
        f"s.settimeout(1)\ns.sendto(b'x', ('127.0.0.1', {port}))\ns.recvfrom(10)",
    )
    add("network", "dns lookup", "import socket\nsocket.getaddrinfo('example.com', 80)")
    for address in ("1.1.1.1", "8.8.8.8", "10.0.0.1", "172.17.0.1", "192.168.0.1", "169.254.169.254"):
        add("network", f"tcp to {address}", f"import socket\nsocket.create_connection(({address!r}, 80), 1)")
    add("network", "raw socket", "import socket\nsocket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)")
    add("network", "packet socket", "import socket\nsocket.socket(socket.AF_PACKET, socket.SOCK_RAW)")
    add(
        "network",
        "netlink route",
        "import socket\ns = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)\n"
        "s.bind((0, 0))\n" + _raise_unless("False", "netlink is harmless here; flag it as refused"),
    )
    add(
        "network",
        "unix socket to the host",
        "import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect('/run/docker.sock')",
    )
    add(
        "network",
        "interfaces",
        "import socket\nnames = [n for _, n in socket.if_nameindex()]\nprint(names)\n"
        + _raise_unless("set(names) - {'lo'}", "only loopback"),
    )
    add(
        "network",
        "subprocess curl",
        f"import subprocess\nsubprocess.run(['curl', '-m', '1', 'http://127.0.0.1:{port}/'], check=True)",
    )
    add(
        "network",
        "bash /dev/tcp",
        f"import subprocess\nsubprocess.run(['bash', '-c', 'echo x > /dev/tcp/127.0.0.1/{port}'],"
        " check=True, timeout=2)",
    )

    # -- shells and exec
    add("shell", "os.system kill all", "import os\nos.system('kill -9 -1')\nraise SystemError('survived')")
    add("shell", "exec sh", "import os\nos.execv('/bin/sh', ['sh'])")
    add("shell", "exec python", "import os, sys\nos.execv(sys.executable, [sys.executable, '-c', 'pass'])")
    add("shell", "pty spawn", "import pty\npty.spawn('/bin/sh')\nraise SystemError('the shell exited')")
    add("shell", "sh reads shadow", "import subprocess\nsubprocess.run(['sh', '-c', 'cat /etc/shadow'], check=True)")
    add("shell", "sh writes /usr", "import subprocess\nsubprocess.run(['sh', '-c', 'touch /usr/pwned'], check=True)")
    add("shell", "sh sudo", "import subprocess\nsubprocess.run(['sudo', 'id'], check=True)")
    add("shell", "su root", "import subprocess\nsubprocess.run(['su', '-c', 'id'], check=True, timeout=2)")
    add(
        "shell",
        "interactive bash",
        "import subprocess\nsubprocess.run(['bash', '-i'], check=True)\nraise SystemError('bash exited')",
    )
    add(
        "shell",
        "nohup detached",
        "import subprocess\nsubprocess.Popen(['nohup', 'sleep', '1000'], start_new_session=True)"
        "\nraise SystemError('detached; the sandbox must still reap it')",
    )
    add(
        "shell",
        "setsid daemon",
        "import os, time\nif os.fork() == 0:\n    os.setsid()\n    time.sleep(1000)\n"
        "raise SystemError('daemon started')",
    )
    add("shell", "mount", "import subprocess\nsubprocess.run(['mount', '-t', 'tmpfs', 'x', '/mnt'], check=True)")
    add("shell", "nsenter host", "import subprocess\nsubprocess.run(['nsenter', '-t', '1', '-a', 'id'], check=True)")

    # -- signal games
    add("signals", "SIGKILL self", "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)")
    add("signals", "SIGKILL parent", "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)")
    add("signals", "SIGKILL everyone", "import os, signal\nos.kill(-1, signal.SIGKILL)")
    add(
        "signals",
        "SIGTERM pid 1",
        "import os, signal, time\nos.kill(1, signal.SIGTERM)\ntime.sleep(0.5)\nraise SystemError('survived')",
    )
    add("signals", "kill the host test process", f"import os, signal\nos.kill({host_pid}, signal.SIGKILL)")
    add("signals", "killpg own group", "import os, signal\nos.killpg(0, signal.SIGKILL)")
    add("signals", "SIGSTOP self", "import os, signal\nos.kill(os.getpid(), signal.SIGSTOP)")
    add(
        "signals",
        "SIGSTOP parent then spin",
        "import os, signal\nos.kill(os.getppid(), signal.SIGSTOP)\nwhile True:\n    pass",
    )
    add("signals", "alarm", "import signal, time\nsignal.alarm(1)\ntime.sleep(5)")
    add("signals", "abort", "import os\nos.abort()")
    add("signals", "segfault", "import ctypes\nctypes.string_at(0)")
    add("signals", "faulthandler sigsegv", "import faulthandler\nfaulthandler._sigsegv()")
    add("signals", "os._exit", "import os\nos._exit(7)")
    add("signals", "sys.exit", "import sys\nsys.exit(3)")
    add(
        "signals",
        "ignore SIGTERM and spin",
        "import signal\nfor s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):\n"
        "    signal.signal(s, signal.SIG_IGN)\nwhile True:\n    pass",
    )
    add(
        "signals",
        "SIGXCPU handler swallows",
        "import signal\nsignal.signal(signal.SIGXCPU, lambda *a: None)\nwhile True:\n    pass",
    )
    for number in range(1, 8):
        add(
            "signals",
            f"kill pid {number}",
            f"import os, signal\nos.kill({number}, signal.SIGKILL)\nraise SystemError('survived')",
        )

    # -- privilege and kernel interfaces
    add("privilege", "setuid 0", "import os\nos.setuid(0)")
    add("privilege", "setgid 0", "import os\nos.setgid(0)")
    add("privilege", "chroot", "import os\nos.chroot('/tmp')")
    add("privilege", "raise rlimit", "import resource\nresource.setrlimit(resource.RLIMIT_AS, (-1, -1))")
    add(
        "privilege",
        "raise process limit",
        "import resource\nresource.setrlimit(resource.RLIMIT_NPROC, (10 ** 6, 10 ** 6))",
    )
    add("privilege", "nice -10", "import os\nos.nice(-10)")
    add(
        "privilege",
        "mount syscall",
        "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        "r = libc.mount(b'x', b'/mnt', b'tmpfs', 0, None)\n"
        "if r != 0:\n    raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))",
    )
    add(
        "privilege",
        "ptrace pid 1",
        "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        "r = libc.ptrace(16, 1, 0, 0)\nif r != 0:\n"
        "    raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))"
        "\nraise SystemError('attached')",
    )
    add("privilege", "/dev/mem", "open('/dev/mem', 'rb').read(16)")
    add("privilege", "/dev/kmsg", "open('/dev/kmsg', 'rb').read(16)")
    add("privilege", "load kernel module", "import subprocess\nsubprocess.run(['modprobe', 'dummy'], check=True)")
    add(
        "privilege",
        "reboot syscall",
        "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        "r = libc.reboot(0x1234567)\nraise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))",
    )
    for flag, name in ((0x10000000, "user"), (0x00020000, "mount"), (0x40000000, "network"), (0x20000000, "pid")):
        add(
            "privilege",
            f"unshare {name} namespace",
            "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
            f"if libc.unshare({flag}) != 0:\n    raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))\n"
            "raise SystemError('unshared')",
        )
    add(
        "privilege",
        "clone a new user namespace",
        "import ctypes, os, signal\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        "pid = libc.syscall(56, 0x10000000 | signal.SIGCHLD, 0, 0, 0, 0)\nif pid == 0:\n    os._exit(0)\n"
        "if pid < 0:\n    raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))\n"
        "raise SystemError('cloned')",
    )
    add(
        "privilege",
        "bpf syscall",
        "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        "libc.syscall(321, 0, 0, 0)\nraise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))",
    )
    add(
        "privilege",
        "keyctl",
        "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        "r = libc.syscall(250, 0, 0, 0, 0, 0)\nraise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))",
    )
    add(
        "privilege",
        "int 0x80 ABI",
        "import ctypes, mmap\ncode = bytes([0xB8, 0x14, 0, 0, 0, 0xCD, 0x80, 0xC3])\n"
        "buf = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)\nbuf.write(code)\n"
        "address = ctypes.addressof(ctypes.c_char.from_buffer(buf))\n"
        "result = ctypes.CFUNCTYPE(ctypes.c_long)(address)()\n"
        "if result < 0:\n    raise OSError(-result, 'int 0x80 getpid refused')\n"
        "raise SystemError(f'getpid via int 0x80: {result}')",
    )
    add("privilege", "sethostname", "import socket\nsocket.sethostname('pwned')")
    add("privilege", "settimeofday", "import time\ntime.clock_settime(time.CLOCK_REALTIME, 0)")

    # -- file descriptor games
    add("fd games", "close every fd", "import os\nos.closerange(0, 4096)")
    add("fd games", "open many files", "fs = [open('/dev/null') for _ in range(100_000)]")
    add("fd games", "many pipes", "import os\nps = [os.pipe() for _ in range(100_000)]")
    add(
        "fd games",
        "stdout to a closed file",
        "import io, sys\nf = io.StringIO()\nf.close()\nsys.stdout = f\nprint('x')",
    )
    add("fd games", "close stdout", "import sys, os\nos.close(1)\nprint('gone')\nsys.stdout.flush()")
    return programs
