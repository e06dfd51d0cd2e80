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

import json
import os
import select
import subprocess
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
        if self.exit_fd is not None:
            os.close(self.exit_fd)  # slirp4netns exits when this closes
            self.exit_fd = None
        if self.process is not None:
            try:
                self.process.wait(timeout=0.5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                try:
                    self.process.wait(timeout=2)
                except subprocess.TimeoutExpired:
                    pass
            self.process = None


def attach(helper: Helper, pid: int) -> Link:
    """Connect the namespace of ``pid`` to the internet; raises ``OSError`` saying why not."""
    _wait_loopback(pid)
    env = child_environment()
    blocked = [*host_addresses(), *BLOCKED_RANGES]
    enter = [helper.nsenter, "-t", str(pid), "-n"]
    if os.geteuid() != 0:  # the namespace belongs to bwrap's user namespace: join it to gain the right
        enter = [helper.nsenter, "-t", str(pid), "-U", "-n", "--preserve-credentials"]
    routes = subprocess.Popen([*enter, helper.ip, "-batch", "-"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, env=env)
    ready_r, ready_w = os.pipe()
    exit_r, exit_w = os.pipe()
    try:
        slirp = subprocess.Popen([helper.slirp, "--configure", f"--mtu={MTU}", "--disable-host-loopback",
                                  "--enable-sandbox", "--enable-seccomp", "--ready-fd", str(ready_w),
                                  "--exit-fd", str(exit_r), str(pid), "tap0"],
                                 pass_fds=(ready_w, exit_r), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL, env=env, start_new_session=True)
    except OSError:
        os.close(exit_w)
        raise
    finally:
        os.close(ready_w)
        os.close(exit_r)
    link = Link(slirp, exit_w, blocked)
    try:
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
        if routes.poll() is None:
            routes.kill()
            routes.wait()
    return link
