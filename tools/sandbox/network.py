"""``network: true`` without the host (paicli issue 34, item 8): the internet through a network
namespace of the sandbox's own, joined by slirp4netns, with the host's loopback off.

bwrap makes the namespace (``--unshare-net``) and reports its first process (``--info-fd``); paicli
starts ``slirp4netns --disable-host-loopback`` on it (the flag rootless Podman and Docker use),
routes the host's own addresses and the link-local range (cloud metadata) to "unreachable" inside
it, and only then lets the command start (``--block-fd``). So a command reaches the internet and
the registries, not ``127.0.0.1`` of the host (a running ``paicli studio``, a database), not the
host's other addresses, not its Unix sockets. slirp4netns rather than pasta: Debian 12's pasta
drops root to ``nobody`` and then cannot join a root-owned namespace, and slirp4netns's
``--ready-fd``/``--exit-fd`` fit bwrap's descriptors. Where slirp4netns (or ``nsenter``/``ip``)
is missing a network command asks for a typed y to use the host's network
(``paicli.tools.policy.approval``), and says so.
"""

from __future__ import annotations

import ctypes
import fcntl
import json
import os
import select
import socket
import struct
import subprocess
import threading
import time
from dataclasses import dataclass, field
from functools import lru_cache

from paicli.tools.sandbox.own import child_environment, program

GUEST_DNS = "10.0.2.3"  # slirp4netns's resolver inside the namespace (it forwards to the host's)
RESOLV_CONF = f"nameserver {GUEST_DNS}\n"
BLOCKED_RANGES = ("169.254.0.0/16",)  # link-local: cloud metadata services answer there
READY_SECONDS = 10.0
MTU = 65520


@dataclass(frozen=True)
class Helper:
    slirp: str
    nsenter: str
    ip: str


@lru_cache(maxsize=1)
def find_helper() -> Helper | None:
    """This machine's slirp4netns, with ``nsenter`` and ``ip`` for the routes; None without them."""
    found = [program(name) or program(name, "/usr/sbin", "/sbin") for name in ("slirp4netns", "nsenter", "ip")]
    return Helper(*found) if all(found) else None  # type: ignore[arg-type]


def missing_why() -> str:
    names = [n for n in ("slirp4netns", "nsenter", "ip") if not (program(n) or program(n, "/usr/sbin", "/sbin"))]
    return "找不到 " + "、".join(names)


def host_addresses(fib: str = "/proc/net/fib_trie") -> list[str]:
    """The host's own IPv4 addresses other than loopback (the local table's ``/32 host LOCAL``)."""
    try:
        with open(fib, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    found: list[str] = []
    for previous, line in zip(lines, lines[1:]):
        if "/32 host LOCAL" in line:
            address = previous.strip().lstrip("|-+ ").strip()
            if address and not address.startswith("127.") and address not in found:
                found.append(address)
    return found


def read_info(fd: int, timeout: float = READY_SECONDS) -> int:
    """The sandbox's first process, from bwrap's ``--info-fd`` JSON."""
    data = b""
    deadline = time.monotonic() + timeout
    while True:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            raise OSError("bwrap 未报告沙箱进程")
        chunk = os.read(fd, 4096)
        if not chunk:
            raise OSError("bwrap 在建立网络前退出")
        data += chunk
        try:
            return int(json.loads(data)["child-pid"])
        except (ValueError, KeyError):
            continue


def _wait_loopback(pid: int, timeout: float = READY_SECONDS) -> None:
    """bwrap brings the namespace's loopback up itself; slirp4netns sets it up too, so it starts
    only once bwrap has (else bwrap's own address request fails)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/net/fib_trie", encoding="utf-8") as f:
                if "127.0.0.1" in f.read():
                    return
        except OSError:
            return  # gone: the caller sees bwrap's own error
        time.sleep(0.0005)


@dataclass
class Link:
    """slirp4netns attached to one sandbox; ``close`` ends it."""

    process: subprocess.Popen | None = None
    exit_fd: int | None = None
    routes: list[str] = field(default_factory=list)

    def close(self) -> None:
        """slirp4netns exits once its exit fd closes; that takes it a while (tens of ms on a busy
        machine) and nothing needs to wait for it: a thread reaps it, killing it if it lingers."""
        if self.exit_fd is not None:
            os.close(self.exit_fd)
            self.exit_fd = None
        if self.process is not None:
            if self.process.poll() is None:
                threading.Thread(target=_reap, args=(self.process,), name="paicli-slirp-reaper", daemon=True).start()
            self.process = None


def _reap(process: subprocess.Popen) -> None:
    try:
        process.wait(timeout=0.5)
    except subprocess.TimeoutExpired:
        process.kill()
        try:
            process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            pass


NS_GET_USERNS = 0xB701  # ioctl: the user namespace that owns a namespace


def attach(helper: Helper, pid: int, in_process: bool | None = None) -> Link:
    """Connect the namespace of ``pid`` to the internet; raises ``OSError`` saying why not.

    The network namespace and the user namespace that owns it are opened here, once, and handed
    to slirp4netns (and ``nsenter``) as descriptors: bwrap's ``--disable-userns`` moves the
    sandbox into a second, nested user namespace as its setup ends, and a helper told only the pid
    joined that one, from which the network namespace cannot be entered (slirp4netns failed with
    ``setns(CLONE_NEWNET): Operation not permitted`` whenever it started after bwrap's setup, so
    more often the busier the machine). ``in_process``: route the host's addresses away over
    netlink from a thread of paicli's (``routes_in``; root only, whose capabilities cover the
    sandbox's namespaces) instead of ``nsenter ip`` (None: root does)."""
    _wait_loopback(pid)
    env = child_environment()
    blocked = [*host_addresses(), *BLOCKED_RANGES]
    if in_process is None:
        in_process = os.geteuid() == 0
    try:
        net = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY | os.O_CLOEXEC)
    except OSError as exc:
        raise OSError(f"沙箱的网络命名空间: {exc.strerror}") from None
    try:
        try:
            user = fcntl.ioctl(net, NS_GET_USERNS)
        except OSError as exc:
            raise OSError(f"沙箱的用户命名空间: {exc.strerror}") from None
        try:
            return _attach(helper, net, user, blocked, env, in_process)
        finally:
            os.close(user)
    finally:
        os.close(net)


def _attach(helper: Helper, net: int, user: int, blocked: list[str], env: dict[str, str], in_process: bool) -> Link:
    routes = None
    if not in_process:
        enter = [helper.nsenter, f"--net=/proc/self/fd/{net}"]
        if os.geteuid() != 0:  # the network namespace's owner grants the right to change its routes
            enter = [helper.nsenter, f"--user=/proc/self/fd/{user}", f"--net=/proc/self/fd/{net}",
                     "--preserve-credentials"]
        routes = subprocess.Popen([*enter, helper.ip, "-batch", "-"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, env=env, pass_fds=(net, user))
    ready_r, ready_w = os.pipe()
    exit_r, exit_w = os.pipe()
    try:
        slirp = subprocess.Popen([helper.slirp, "--configure", f"--mtu={MTU}", "--disable-host-loopback",
                                  "--enable-sandbox", "--enable-seccomp", "--ready-fd", str(ready_w),
                                  "--exit-fd", str(exit_r), "--netns-type=path", f"--userns-path=/proc/self/fd/{user}",
                                  f"/proc/self/fd/{net}", "tap0"],
                                 pass_fds=(ready_w, exit_r, net, user), stdin=subprocess.DEVNULL,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, start_new_session=True)
    except OSError:
        os.close(exit_w)
        raise
    finally:
        os.close(ready_w)
        os.close(exit_r)
    link = Link(slirp, exit_w, blocked)
    try:
        if routes is None:
            routes_in(net, blocked)
        else:
            _, errors = routes.communicate("".join(f"route add unreachable {a}\n" for a in blocked).encode(),
                                           timeout=READY_SECONDS)
            if routes.returncode != 0:
                raise OSError(f"ip route: {errors.decode(errors='replace').strip()[:200]}")
        ready, _, _ = select.select([ready_r], [], [], READY_SECONDS)
        if not ready or not os.read(ready_r, 1):
            code = slirp.poll()
            raise OSError(f"slirp4netns 未就绪{f'（exit {code}）' if code is not None else ''}")
    except BaseException:
        link.close()
        raise
    finally:
        os.close(ready_r)
        if routes is not None and routes.poll() is None:
            routes.kill()
            routes.wait()
    return link


CLONE_NEWNET = 0x40000000
RTM_NEWROUTE, NLMSG_ERROR = 24, 2
NLM_F_REQUEST, NLM_F_ACK, NLM_F_EXCL, NLM_F_CREATE = 0x1, 0x4, 0x200, 0x400
RT_TABLE_MAIN, RTPROT_BOOT, RT_SCOPE_UNIVERSE, RTN_UNREACHABLE, RTA_DST = 254, 3, 0, 7, 1


def routes_in(net: int, blocked: list[str]) -> None:
    """``ip route add unreachable <each>`` in the network namespace ``net`` (a descriptor) without
    a process: a thread of its own enters the namespace (``setns``), opens a netlink socket there
    and ends (a socket stays in the namespace it was made in, so no thread of paicli's is left
    inside); the requests go through that socket. Raises ``OSError`` saying why not."""
    sock = _netlink_socket_in(net)
    try:
        sock.settimeout(READY_SECONDS)
        for seq, network in enumerate(blocked, 1):
            sock.send(route_request(seq, network))
        acked: set[int] = set()
        while len(acked) < len(blocked):
            data = sock.recv(65536)
            while len(data) >= 20:
                length, kind, _, seq, _ = struct.unpack_from("=IHHII", data)
                if kind == NLMSG_ERROR:
                    (code,) = struct.unpack_from("=i", data, 16)
                    if code:
                        what = blocked[seq - 1] if 0 < seq <= len(blocked) else "?"
                        raise OSError(-code, f"ip route add unreachable {what}: {os.strerror(-code)}")
                    acked.add(seq)
                data = data[(max(length, 16) + 3) & ~3:]  # messages are 4-byte aligned
    except socket.timeout:
        raise OSError("ip route: 网络命名空间没有回应") from None
    finally:
        sock.close()


def route_request(seq: int, network: str) -> bytes:
    """The netlink request of ``ip route add unreachable <network>`` (IPv4, the main table)."""
    address, _, bits = network.partition("/")
    body = struct.pack("=BBBBBBBBI", socket.AF_INET, int(bits) if bits else 32, 0, 0, RT_TABLE_MAIN, RTPROT_BOOT,
                       RT_SCOPE_UNIVERSE, RTN_UNREACHABLE, 0)
    body += struct.pack("=HH4s", 8, RTA_DST, socket.inet_aton(address))
    flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_EXCL | NLM_F_CREATE
    return struct.pack("=IHHII", 16 + len(body), RTM_NEWROUTE, flags, seq, 0) + body


def _netlink_socket_in(net: int) -> socket.socket:
    found: list = []

    def inside() -> None:
        try:
            _setns(net, CLONE_NEWNET)
            found.append(socket.socket(socket.AF_NETLINK, socket.SOCK_RAW | socket.SOCK_CLOEXEC, 0))
        except OSError as exc:
            found.append(exc)

    thread = threading.Thread(target=inside, name="paicli-sandbox-netns")
    thread.start()
    thread.join()
    if not found or isinstance(found[0], OSError):
        raise OSError(f"setns: {found[0] if found else '?'}")
    return found[0]


def _setns(fd: int, kind: int) -> None:
    if hasattr(os, "setns"):  # Python 3.12
        os.setns(fd, kind)
        return
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.setns(fd, kind) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
