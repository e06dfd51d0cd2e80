"""A network command's namespace joined to the internet without the host (issue 34 item 8), both
ways of routing the host's addresses away: netlink from a thread of paicli's (root) and
``nsenter ip`` (everyone else); and slirp4netns left to end on its own after the command."""

from __future__ import annotations

import os
import socket
import struct
import subprocess
import time
from pathlib import Path

import pytest

from paicli.tools.sandbox import bwrap
from paicli.tools.sandbox.command import Mechanism, find_mechanism
from paicli.tools.sandbox.layout import layout, prepare
from paicli.tools.sandbox.network import BLOCKED_RANGES, attach, find_helper, host_addresses, read_info, route_request
from paicli.tools.sandbox.options import SandboxOptions
from tests.support.waiting import patience

CI = os.environ.get("CI") == "true"  # there a missing bubblewrap or slirp4netns fails these tests instead
real = pytest.mark.skipif(not CI and (not isinstance(find_mechanism(), Mechanism) or find_helper() is None),
                          reason="no bubblewrap or slirp4netns here")


def test_the_route_request_is_ip_route_add_unreachable():
    message = route_request(7, "169.254.0.0/16")
    length, kind, flags, seq, _ = struct.unpack_from("=IHHII", message)
    family, dst_len, _, _, table, _, _, kind_of_route, _ = struct.unpack_from("=BBBBBBBBI", message, 16)
    attr_len, attr, address = struct.unpack_from("=HH4s", message, 28)
    assert (length, kind, seq, family, dst_len, table, kind_of_route) == (len(message), 24, 7, socket.AF_INET, 16, 254, 7)
    assert flags & 0x1 and flags & 0x4 and (attr_len, attr, socket.inet_ntoa(address)) == (8, 1, "169.254.0.0")
    assert struct.unpack_from("=B", route_request(1, "192.0.2.2"), 17) == (32,)


def routes_seen(tmp_path: Path, in_process: bool) -> tuple[str, object]:
    project = tmp_path / "p"
    project.mkdir(exist_ok=True)
    plan = layout(project, {}, SandboxOptions(data=str(tmp_path / "data")), sockets=set())
    prepare(plan)
    info_r, info_w = os.pipe()
    block_r, block_w = os.pipe()
    argv = bwrap.argv(find_mechanism().path, plan, ["sh", "-c", "ip route; cat /proc/net/route"], network="isolated",
                      info_fd=info_w, block_fd=block_r)
    process = subprocess.Popen(argv, pass_fds=(info_w, block_r), stdout=subprocess.PIPE, text=True,
                               env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"})
    os.close(info_w)
    os.close(block_r)
    try:
        link = attach(find_helper(), read_info(info_r), in_process=in_process)
        os.write(block_w, b"1")
        out, _ = process.communicate(timeout=patience(30))
    finally:
        os.close(info_r)
        os.close(block_w)
        if process.poll() is None:
            process.kill()
    slirp = link.process
    link.close()
    return out, slirp


@real
@pytest.mark.parametrize("in_process", [True, False], ids=["netlink-from-a-thread", "nsenter-ip"])
def test_the_hosts_addresses_and_link_local_are_unreachable_inside(tmp_path, in_process):
    if in_process and os.geteuid() != 0:
        pytest.skip("joining the namespace from a thread needs root")  # non-root always goes through nsenter
    out, slirp = routes_seen(tmp_path, in_process)
    for network in [*host_addresses(), *BLOCKED_RANGES]:
        assert f"unreachable {network}" in out
    assert "default via 10.0.2.2 dev tap0" in out  # and the internet through slirp4netns
    deadline = time.monotonic() + patience(10)
    while slirp.poll() is None and time.monotonic() < deadline:  # reaped by a thread of its own
        time.sleep(0.05)
    assert slirp.poll() is not None
