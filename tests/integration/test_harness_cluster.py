"""The Redis Cluster harness (harness/cluster.py) starts a node on fresh ports when one of its ports was
taken between the pick and the bind: the cluster pass of a CI run once failed all 701 tests at set-up on
"bind: Address already in use" for a node's bus port, on a loaded machine."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from harness.cluster import ClusterNode, start_on_free_ports
from harness.services import ServiceStartError, free_port


def test_a_node_whose_bus_port_is_taken_starts_on_fresh_ports(tmp_path: Path) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = taken.getsockname()[1]
        node = ClusterNode(free_port(), busy, tmp_path / "node")
        try:
            start_on_free_ports(node)
            assert node.bus_port != busy
            assert b"Address already in use" in node.log_path().read_bytes()  # the first try did fail
        finally:
            node.stop()


def test_a_node_that_fails_otherwise_is_not_retried(tmp_path: Path) -> None:
    (tmp_path / "node").mkdir()
    (tmp_path / "node" / "nodes.conf").write_text("not a cluster config\n")
    node = ClusterNode(free_port(), free_port(), tmp_path / "node")
    ports = (node.port, node.bus_port)
    with pytest.raises(ServiceStartError):
        start_on_free_ports(node)
    assert (node.port, node.bus_port) == ports
